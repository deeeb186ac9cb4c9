#!/usr/bin/env python3
"""Run the whole pipeline on a sample conversation and print the proof."""

import sys

from personal_understanding.demo import main

if __name__ == "__main__":
    sys.exit(main())
