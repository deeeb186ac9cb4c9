#!/usr/bin/env python3
"""The turn gate: may the agent tell the user it is saved?"""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("session_check"))
