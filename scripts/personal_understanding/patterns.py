"""Regular expressions compiled on first use.

Compiling is most of what importing a module of patterns costs (a CLI process pays it on
every call); a command that never reaches a pattern never pays for it.
"""

import re


class Lazy:
    """re.compile(pattern, flags), made when one of its methods is first asked for."""

    __slots__ = ("_args", "_rx")

    def __init__(self, pattern, flags=0):
        self._args = (pattern, flags)
        self._rx = None

    def __getattr__(self, name):
        if self._rx is None:
            self._rx = re.compile(*self._args)
        return getattr(self._rx, name)
