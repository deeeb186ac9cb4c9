"""Regular expressions compiled on first use.

Compiling is most of what importing a module of patterns costs (a CLI process pays it on
every call); a command that never reaches a pattern never pays for it.
"""

import re


class Lazy:
    """re.compile(pattern, flags), made when one of its methods is first asked for.

    needs: words (lower case) the pattern cannot match without; `finds` does not compile it
    for a text that holds none of them.
    """

    __slots__ = ("_args", "_rx", "needs")

    def __init__(self, pattern, flags=0, needs=()):
        self._args = (pattern, flags)
        self._rx = None
        self.needs = needs

    def finds(self, text):
        """Does the pattern match somewhere in `text`?"""
        if self.needs:
            lowered = text.lower()
            if not any(word in lowered for word in self.needs):
                return False
        return self.search(text) is not None

    def __getattr__(self, name):
        if self._rx is None:
            self._rx = re.compile(*self._args)
        return getattr(self._rx, name)
