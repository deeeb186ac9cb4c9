#!/usr/bin/env python3
"""Write a read-only HTML page per turn: receipt, capture, records, closure, retrievals."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("pipeline_view"))
