#!/usr/bin/env python3
"""Regenerate references/commands.md from the command registry (maintainers)."""

import sys

from personal_understanding.docs import main

if __name__ == "__main__":
    sys.exit(main())
