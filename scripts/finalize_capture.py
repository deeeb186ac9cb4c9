#!/usr/bin/env python3
"""Close a capture in the ledger: derived, or no-derivation-needed with a reason."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("finalize_capture"))
