#!/usr/bin/env python3
"""List due, upcoming and undated follow-ups (due ones come with a ready prompt)."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("followup_check"))
