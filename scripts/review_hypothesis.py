#!/usr/bin/env python3
"""Confirm (with the user's words) or reject a candidate hypothesis."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("review_hypothesis"))
