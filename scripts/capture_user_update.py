#!/usr/bin/env python3
"""Save the user's message verbatim for a turn whose receipt requires it."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("capture_user_update"))
