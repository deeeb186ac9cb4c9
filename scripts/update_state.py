#!/usr/bin/env python3
"""Supersede a current state or decision with a new version citing the new words."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("update_state"))
