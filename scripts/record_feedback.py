#!/usr/bin/env python3
"""Record the user's verdict on memories an answer used (helpful, missed, corrected, unclear)."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("record_feedback"))
