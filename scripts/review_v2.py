#!/usr/bin/env python3
"""A review package: risky items to re-check against the user's words (never rewrites anything)."""

import sys

from personal_understanding.cli import main

if __name__ == "__main__":
    sys.exit(main("review_v2"))
