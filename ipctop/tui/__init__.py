"""The live Textual monitor: sources feed a session model, widgets draw it."""
