#!/usr/bin/env python3
"""Forget a capture or a record permanently, only when the user asks (dry run without confirm)."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("forget"))
