#!/usr/bin/env python3
"""Close a follow-up: answered, declined or resolved, with a specific note."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("resolve_followup"))
