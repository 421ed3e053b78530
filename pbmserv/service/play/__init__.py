"""A board in play: the text of its mails, replays, who gets its mails, its reply addresses, its ratings."""
