"""Pictures of a drawing: SVG for the web, PNG for mail, both painted from
the one `Scene` that `pbmserv.gamekit.scene` lays out."""

from pbmserv.pictures.png import png
from pbmserv.pictures.svg import svg

__all__ = ["png", "svg"]
