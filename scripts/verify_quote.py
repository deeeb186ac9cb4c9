#!/usr/bin/env python3
"""Check that a quotation is exactly in a capture, with its offsets."""

import sys

from personal_understanding.cli import main

if __name__ == "__main__":
    sys.exit(main("verify_quote"))
