#!/usr/bin/env python3
"""The current-state view: core, reality, load, tensions, next (1-3 items each)."""

import sys

from personal_understanding.cli import main

if __name__ == "__main__":
    sys.exit(main("current_state"))
