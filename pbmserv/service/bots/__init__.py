"""The bots: who they are, which turns are due, which is thought next, their manners."""
