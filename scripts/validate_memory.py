#!/usr/bin/env python3
"""Validate the whole archive: clean, warnings or failed."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("validate_memory"))
