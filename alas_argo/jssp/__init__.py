"""ALAS."""
