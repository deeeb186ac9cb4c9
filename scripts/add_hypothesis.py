#!/usr/bin/env python3
"""Propose a hypothesis (or intent guess) backed by at least two records from different dates."""

import sys

from personal_understanding.cli import main

if __name__ == "__main__":
    sys.exit(main("add_hypothesis"))
