#!/usr/bin/env python3
"""A compact map of the archive: life spine, current state, who is who, cards, due follow-ups."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("catalog_context"))
