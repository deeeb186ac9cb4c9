"""Regular expressions compiled on first use.

Compiling is most of what importing a module of patterns costs (a CLI process pays it on
every call); a command that never reaches a pattern never pays for it.
"""

import re


class Lazy:
    """re.compile(pattern, flags), made when one of its methods is first asked for.

    needs: words (lower case) the pattern cannot match without; `finds` and `finditer` do not
    compile it for a text that holds none of them.
    """

    __slots__ = ("_args", "_rx", "needs")

    def __init__(self, pattern, flags=0, needs=()):
        self._args = (pattern, flags)
        self._rx = None
        self.needs = needs

    def _cannot_match(self, text):
        if not self.needs:
            return False
        lowered = text.lower()
        return not any(word in lowered for word in self.needs)

    def finds(self, text):
        """Does the pattern match somewhere in `text`?"""
        return not self._cannot_match(text) and self.search(text) is not None

    def finditer(self, text, *span):
        """The matches in `text` (from pos to endpos, when given), as re's finditer."""
        return iter(()) if self._cannot_match(text) else self._compiled().finditer(text, *span)

    def _compiled(self):
        if self._rx is None:
            self._rx = re.compile(*self._args)
        return self._rx

    def __getattr__(self, name):
        return getattr(self._compiled(), name)
