#!/usr/bin/env python3
"""Regenerate every derived view (indexes, ledger projection, dashboard data) from the sources of truth."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("rebuild_views"))
