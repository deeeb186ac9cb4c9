#!/usr/bin/env python3
"""Register the MCP server with your MCP clients (Claude, Codex, Cursor, VS Code, Windsurf, Cline, ...)."""

import sys

from personal_understanding.install_mcp import main

if __name__ == "__main__":
    sys.exit(main())
