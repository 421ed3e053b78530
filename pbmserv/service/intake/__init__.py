"""Intake: a mail checked and stored durably before anyone is told it is safe (SMTP and `receive`)."""
