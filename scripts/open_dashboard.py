#!/usr/bin/env python3
"""Write the audit dashboard for this archive (rebuilding its data if stale) and open it."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("open_dashboard"))
