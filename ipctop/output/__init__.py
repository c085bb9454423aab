"""Text tables, JSON records, CSV and gnuplot files (no UI imports)."""
