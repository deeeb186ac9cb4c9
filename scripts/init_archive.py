#!/usr/bin/env python3
"""Create the archive layout (idempotent)."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("init_archive"))
