#!/usr/bin/env python3
"""Write a read-only HTML page per turn: receipt, capture, records, closure, retrievals."""

import sys

from personal_understanding.cli import main

if __name__ == "__main__":
    sys.exit(main("pipeline_view"))
