"""Personal Understanding: a local, verbatim-first personal memory for AI agents."""

__version__ = "0.1.0"
