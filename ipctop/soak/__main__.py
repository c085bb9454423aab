"""`python -m ipctop.soak` (see ipctop/soak/leak_soak.py)."""

import sys

from .leak_soak import main

if __name__ == "__main__":  # a walk over the package's modules imports this one too
    sys.exit(main())
