"""Records: the typed models and their schema, reading and writing record files, and the
record parts of ab, latency, matrix and profile runs."""
