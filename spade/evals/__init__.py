"""Held-out evaluation: benchmark declarations, runners, scorers, results records."""
