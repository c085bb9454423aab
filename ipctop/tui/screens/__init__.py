"""Modal screens over the main view: help and the choosers."""
