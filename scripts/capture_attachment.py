#!/usr/bin/env python3
"""Keep an attachment's original bytes (SHA-256 addressed) as a capture of the turn."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("capture_attachment"))
