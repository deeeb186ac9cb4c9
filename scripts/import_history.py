#!/usr/bin/env python3
"""Import conversation history (jsonl, locomo, chatgpt, text) as verbatim captures."""

import sys

from personal_understanding.cli import run

if __name__ == "__main__":
    sys.exit(run("import_history"))
