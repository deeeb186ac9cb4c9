#!/usr/bin/env python3
"""Restore from a snapshot: verified first, dry run by default, forgotten material stays forgotten."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("restore_archive"))
