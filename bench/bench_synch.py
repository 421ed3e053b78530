"""Random full games of Move In Synch, In Opposition per option set. A
"move" here is one text a player sends: a placement or one half of a move.

Run: .venv/bin/python bench/bench_synch.py [seconds per option set]
"""

from random_games import main

from games.synch import Synch

OPTION_SETS = (
    {"size": "4"},
    {"size": "8"},
    {"size": "8", "order": "direction-first"},
    {"size": "16"},
    {"size": "26"},
    {"size": "26", "order": "direction-first"},
)

if __name__ == "__main__":
    main([(Synch(), options) for options in OPTION_SETS])
