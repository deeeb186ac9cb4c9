#!/usr/bin/env python3
"""Merge a duplicate entity into its canonical one (a redirect with a reason)."""

import sys

from personal_understanding.cli import main

if __name__ == "__main__":
    sys.exit(main("merge_entities"))
