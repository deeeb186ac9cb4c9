#!/usr/bin/env python3
"""The current-state view: core, reality, load, tensions, next (1-3 items each)."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("current_state"))
