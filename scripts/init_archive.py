#!/usr/bin/env python3
"""Create the archive layout (idempotent)."""

import sys

from personal_understanding.cli import main

if __name__ == "__main__":
    sys.exit(main("init_archive"))
