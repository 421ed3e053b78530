"""The read-only web site (`pbmserv web`, and `serve`'s web process): the
boards, players, standings and rules, as the public sees them, read
through the store and never written."""
