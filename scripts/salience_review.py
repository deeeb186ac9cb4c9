#!/usr/bin/env python3
"""Demote imported-heuristic weights nobody confirmed in N days to 0 (dry run by default)."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("salience_review"))
