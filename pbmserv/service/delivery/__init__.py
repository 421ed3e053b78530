"""Delivery: working the outbox (what is due, claims, retries)."""
