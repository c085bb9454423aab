"""`python -m ipctop.lab` (see ipctop/lab/lab_cli.py)."""

import sys

from .lab_cli import main

sys.exit(main())
