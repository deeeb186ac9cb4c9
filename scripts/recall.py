#!/usr/bin/env python3
"""Read the memory: probe, the words behind ids (deep), or the archive survey."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("recall"))
