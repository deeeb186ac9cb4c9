#!/usr/bin/env python3
"""Classify a user message and write the turn's receipt (call first, every turn)."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("preflight_context"))
