#!/usr/bin/env python3
"""Validate the whole archive: clean, warnings or failed."""

import sys

from personal_understanding.cli import main

if __name__ == "__main__":
    sys.exit(main("validate_memory"))
