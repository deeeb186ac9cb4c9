#!/usr/bin/env python3
"""Recall: probe the archive for a query (or read the words behind ids with level=deep)."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("retrieve_v2"))
