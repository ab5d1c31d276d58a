"""``python -m firecy``: the firecy command line (see :mod:`firecy.cli`)."""
import sys

from firecy.cli import main

if __name__ == "__main__":
    sys.exit(main())
