#!/usr/bin/env python3
"""Import conversation history (jsonl, locomo, chatgpt, text) as verbatim captures."""

import sys

from personal_understanding.cli import main

if __name__ == "__main__":
    sys.exit(main("import_history"))
