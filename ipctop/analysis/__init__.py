"""Settling, scalability and comparison: pure arithmetic on samples and records (no UI imports)."""
