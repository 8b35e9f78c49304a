"""Builders and helpers shared by the test modules; test modules import from `tests` only here."""
