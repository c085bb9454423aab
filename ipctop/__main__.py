"""`python -m ipctop`: as the `ipctop` command, an early signal is a quiet exit (entry.py)."""

import sys

from .entry import main

sys.exit(main())
