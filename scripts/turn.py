#!/usr/bin/env python3
"""Start a user turn: the receipt, the verbatim save when personal, and what the memory holds about it."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("turn"))
