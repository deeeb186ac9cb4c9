#!/usr/bin/env python3
"""Check that a quotation is exactly in a capture, with its offsets."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("verify_quote"))
