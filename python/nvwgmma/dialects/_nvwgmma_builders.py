"""Friendly builders (filled in below)."""
