"""`python -m ipctop.lab` (see ipctop/lab/cli.py)."""

import sys

from .cli import main

sys.exit(main())
