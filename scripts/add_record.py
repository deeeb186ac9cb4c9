#!/usr/bin/env python3
"""Add a derived record (event, fact, state, entity, ...) that cites the words it came from."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("add_record"))
