"""`python -m pbmserv`: the `pbmserv` command (how `receive` starts its drainer)."""

from pbmserv.cli.main import main

main()
