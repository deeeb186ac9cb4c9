#!/usr/bin/env python3
"""The MCP server (stdio): every command as a personal_* tool, for any MCP client."""

import sys

from personal_understanding.mcp_server import main

if __name__ == "__main__":
    sys.exit(main())
