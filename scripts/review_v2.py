#!/usr/bin/env python3
"""A review package: risky items to re-check against the user's words (never rewrites anything)."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("review_v2"))
