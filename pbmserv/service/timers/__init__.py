"""The timer pass: reminders, forfeits, vacations that ran out, old mail deleted."""
