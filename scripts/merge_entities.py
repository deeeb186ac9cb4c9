#!/usr/bin/env python3
"""Merge a duplicate entity into its canonical one (a redirect with a reason)."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("merge_entities"))
