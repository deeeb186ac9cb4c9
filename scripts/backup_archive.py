#!/usr/bin/env python3
"""Snapshot memory/ and sources/ into a zip with a SHA-256 manifest; verify snapshots."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("backup_archive"))
