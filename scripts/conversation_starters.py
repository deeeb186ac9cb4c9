#!/usr/bin/env python3
"""One conversation starter at a time, citing the gap it came from."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("conversation_starters"))
