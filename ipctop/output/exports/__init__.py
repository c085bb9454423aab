"""Exports for other tools: CSV, gnuplot data files, the Prometheus endpoint."""
