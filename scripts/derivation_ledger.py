#!/usr/bin/env python3
"""Audit the derivation ledger against captures and records; --repair rebuilds it."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("derivation_ledger"))
