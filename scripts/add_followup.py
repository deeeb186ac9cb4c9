#!/usr/bin/env python3
"""Remember to ask about something later, tied to the words that raised it."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("add_followup"))
