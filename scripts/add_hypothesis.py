#!/usr/bin/env python3
"""Propose a hypothesis (or intent guess) backed by at least two records from different dates."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("add_hypothesis"))
