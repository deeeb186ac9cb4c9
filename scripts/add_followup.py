#!/usr/bin/env python3
"""Remember to ask about something later, tied to the words that raised it."""

import sys

from personal_understanding.cli import main

if __name__ == "__main__":
    sys.exit(main("add_followup"))
