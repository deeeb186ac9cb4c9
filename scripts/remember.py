#!/usr/bin/env python3
"""Save what a turn adds (all or nothing), close the turn and run the gate."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("remember"))
