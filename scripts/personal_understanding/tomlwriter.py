"""Just enough TOML to register one server table in a client's config.toml.

Reading uses `tomllib` where it exists (Python 3.11+). On 3.10 a small, lenient
parser stands in: exact for strings, arrays, inline tables, booleans and
integers, and keeps any other value as its raw text, so a valid file is never
refused for using a feature this module does not need.

Writing never re-serializes a document. `find_table` locates the text of one
`[a.b]` table (with its sub-tables); `replace_table` swaps exactly that text
for a freshly rendered table, or appends one, so every other byte of the file
stays as it was.
"""

import re

try:  # 3.11+
    import tomllib as _tomllib
except ImportError:  # 3.10: the fallback below
    _tomllib = None

_BARE = re.compile(r"[A-Za-z0-9_-]+\Z")
_BARE_AT = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\", "e": "\x1b"}


class Raw(str):
    """A value the fallback parser keeps as written (dates, floats, ...)."""


def parse(text):
    """The document as nested dicts. Raises ValueError when it is not TOML."""
    if _tomllib is not None:
        return _tomllib.loads(text)
    return mini_parse(text)


# --- writing -----------------------------------------------------------------

def quote(value):
    out = ['"']
    for ch in value:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch in "\b\t\n\f\r":
            out.append("\\" + "btnfr"["\b\t\n\f\r".index(ch)])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def key(name):
    return name if _BARE.match(name) else quote(name)


def value(obj):
    if isinstance(obj, Raw):
        return str(obj)
    if isinstance(obj, bool):
        return "true" if obj else "false"
    if isinstance(obj, (int, float)):
        return repr(obj)
    if isinstance(obj, str):
        return quote(obj)
    if isinstance(obj, (list, tuple)):
        return "[" + ", ".join(value(v) for v in obj) + "]"
    if isinstance(obj, dict):
        return "{ " + ", ".join(f"{key(k)} = {value(v)}" for k, v in obj.items()) + " }" if obj else "{}"
    if hasattr(obj, "isoformat"):
        return obj.isoformat()
    raise TypeError(f"cannot write {type(obj).__name__} as TOML")


def render_table(path, values, newline="\n"):
    """`[a.b]` and its keys; nested dicts become inline tables."""
    lines = ["[" + ".".join(key(part) for part in path) + "]"]
    lines += [f"{key(k)} = {value(v)}" for k, v in values.items()]
    return newline.join(lines) + newline


def replace_table(text, span, table_text):
    """Put `table_text` where `span` was, or append it; the rest of `text` is untouched."""
    if span is not None:
        start, end = span
        return text[:start] + table_text + text[end:]
    newline = "\r\n" if "\r\n" in text else "\n"
    if not text:
        return table_text
    if not text.endswith("\n"):
        text += newline
    return text + newline + table_text


# --- locating a table's text ---------------------------------------------------

def _skip_string(line, i):
    """Index just past the single-line string starting at line[i]."""
    quote_char = line[i]
    i += 1
    while i < len(line):
        if quote_char == '"' and line[i] == "\\":
            i += 2
            continue
        if line[i] == quote_char:
            return i + 1
        i += 1
    return i


def _line_end_state(line, state):
    """Whether `line` leaves us inside a multi-line string ('\"\"\"' or \"'''\") or not (None)."""
    i = 0
    while i < len(line):
        if state == '"""':
            if line[i] == "\\":
                i += 2
                continue
            if line.startswith('"""', i):
                state, i = None, i + 3
                while i < len(line) and line[i] == '"':
                    i += 1
                continue
            i += 1
        elif state == "'''":
            j = line.find("'''", i)
            if j < 0:
                return state
            state, i = None, j + 3
            while i < len(line) and line[i] == "'":
                i += 1
        else:
            ch = line[i]
            if ch == "#":
                return None
            if line.startswith('"""', i) or line.startswith("'''", i):
                state, i = line[i:i + 3], i + 3
            elif ch in "\"'":
                i = _skip_string(line, i)
            else:
                i += 1
    return state


def parse_key_path(text, i=0):
    """Dotted key at text[i:] -> (parts, index after it); ([], i) when there is none."""
    parts = []
    while True:
        while i < len(text) and text[i] in " \t":
            i += 1
        if i < len(text) and text[i] in "\"'":
            end = _skip_string(text, i)
            if end > len(text) or text[end - 1] != text[i] or end - i < 2:
                return [], i
            parts.append(_unescape(text[i + 1:end - 1]) if text[i] == '"' else text[i + 1:end - 1])
            i = end
        else:
            m = _BARE_AT.match(text, i)
            if not m:
                return [], i
            parts.append(m.group())
            i = m.end()
        while i < len(text) and text[i] in " \t":
            i += 1
        if i < len(text) and text[i] == ".":
            i += 1
            continue
        return parts, i


def header_of(line):
    """('table'|'array', parts) for a `[a.b]` / `[[a.b]]` line, else None."""
    stripped = line.lstrip()
    if not stripped.startswith("["):
        return None
    array = stripped.startswith("[[")
    parts, i = parse_key_path(stripped, 2 if array else 1)
    close = "]]" if array else "]"
    if not parts or not stripped.startswith(close, i):
        return None
    rest = stripped[i + len(close):].strip()
    if rest and not rest.startswith("#"):
        return None
    return ("array" if array else "table", parts)


def find_table(text, path):
    """(start, end) offsets of table `path` with its sub-tables, trailing blank and comment lines excluded.

    None when the file has no `[path]` header (the table may still be defined
    by dotted keys or an inline table elsewhere; see `defined_outside`).
    """
    path = list(path)
    state = None
    offset = 0
    start = None
    last_content_end = None
    for line in text.splitlines(keepends=True):
        line_start, offset = offset, offset + len(line)
        if state is None:
            head = header_of(line)
            if head is not None:
                if start is not None and head[1][:len(path)] != path:
                    break
                if start is None and head == ("table", path):
                    start = line_start
            stripped = line.strip()
            if start is not None and stripped and not stripped.startswith("#"):
                last_content_end = offset
        elif start is not None:
            last_content_end = offset
        state = _line_end_state(line, state)
    if start is None:
        return None
    return start, last_content_end


def defined_outside(text, path):
    """True when a key path under `path` is set outside its own `[path]` section (dotted keys, inline table)."""
    path = list(path)
    state = None
    table = []
    for line in text.splitlines():
        if state is None:
            head = header_of(line)
            if head is not None:
                table = head[1]
            elif line.strip() and not line.strip().startswith("#"):
                parts, i = parse_key_path(line)
                rest = line[i:].lstrip()
                if parts and rest.startswith("="):
                    full = table + parts
                    if full[:len(path)] == path and table[:len(path)] != path:
                        return True
        state = _line_end_state(line, state)
    return False


# --- the 3.10 fallback reader ----------------------------------------------------

def _unescape(body):
    out = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1:i + 2]
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif nxt in ("u", "U"):
            width = 4 if nxt == "u" else 8
            digits = body[i + 2:i + 2 + width]
            if len(digits) != width or not re.fullmatch(r"[0-9A-Fa-f]+", digits):
                raise ValueError(f"bad unicode escape \\{nxt}{digits}")
            out.append(chr(int(digits, 16)))
            i += 2 + width
        elif nxt in ("\n", "\r", " ", "\t"):  # line-ending backslash in a multi-line string
            j = i + 1
            while j < len(body) and body[j] in " \t\r\n":
                j += 1
            i = j
        else:
            raise ValueError(f"bad escape \\{nxt}")
    return "".join(out)


class _Mini:
    def __init__(self, text):
        self.s = text
        self.i = 0

    def error(self, what):
        line = self.s.count("\n", 0, self.i) + 1
        return ValueError(f"{what} (line {line})")

    def ws(self, newlines=False):
        chars = " \t\r\n" if newlines else " \t"
        while self.i < len(self.s):
            if self.s[self.i] in chars:
                self.i += 1
            elif newlines and self.s[self.i] == "#":
                end = self.s.find("\n", self.i)
                self.i = len(self.s) if end < 0 else end
            else:
                break

    def end_of_line(self):
        self.ws()
        if self.i < len(self.s) and self.s[self.i] == "#":
            end = self.s.find("\n", self.i)
            self.i = len(self.s) if end < 0 else end
        if self.i < len(self.s) and self.s[self.i] not in "\r\n":
            raise self.error("expected the end of the line")

    def key(self):
        parts, i = parse_key_path(self.s, self.i)
        if not parts:
            raise self.error("expected a key")
        self.i = i
        return parts

    def parse(self):
        doc = {}
        current = doc
        while True:
            self.ws(newlines=True)
            if self.i >= len(self.s):
                return doc
            if self.s[self.i] == "[":
                array = self.s.startswith("[[", self.i)
                self.i += 2 if array else 1
                parts = self.key()
                close = "]]" if array else "]"
                if not self.s.startswith(close, self.i):
                    raise self.error("unclosed table header")
                self.i += len(close)
                current = _descend(doc, parts[:-1] if array else parts, self)
                if array:
                    items = current.setdefault(parts[-1], [])
                    if not isinstance(items, list):
                        raise self.error("array of tables redefines a key")
                    items.append({})
                    current = items[-1]
            else:
                parts = self.key()
                self.ws()
                if not self.s.startswith("=", self.i):
                    raise self.error("expected '=' after a key")
                self.i += 1
                self.ws()
                target = _descend(current, parts[:-1], self)
                if parts[-1] in target:
                    raise self.error(f"duplicate key {'.'.join(parts)}")
                target[parts[-1]] = self.value()
            self.end_of_line()

    def value(self):
        s, i = self.s, self.i
        for opener in ('"""', "'''"):
            if s.startswith(opener, i):
                end = s.find(opener, i + 3)
                while opener == '"""' and end > 0 and _escaped(s, end):
                    end = s.find(opener, end + 1)
                if end < 0:
                    raise self.error("unterminated multi-line string")
                while s.startswith(opener[0], end + 3):
                    end += 1
                body = s[i + 3:end]
                body = body[1:] if body.startswith("\n") else body[2:] if body.startswith("\r\n") else body
                self.i = end + 3
                return _unescape(body) if opener == '"""' else body
        if i < len(s) and s[i] in "\"'":
            end = _skip_string(s, i)
            if end > len(s) or end - i < 2 or s[end - 1] != s[i] or "\n" in s[i:end]:
                raise self.error("unterminated string")
            self.i = end
            return _unescape(s[i + 1:end - 1]) if s[i] == '"' else s[i + 1:end - 1]
        if i < len(s) and s[i] == "[":
            self.i += 1
            items = []
            while True:
                self.ws(newlines=True)
                if self.s.startswith("]", self.i):
                    self.i += 1
                    return items
                items.append(self.value())
                self.ws(newlines=True)
                if self.s.startswith(",", self.i):
                    self.i += 1
                elif not self.s.startswith("]", self.i):
                    raise self.error("expected ',' or ']' in an array")
        if i < len(s) and s[i] == "{":
            self.i += 1
            table = {}
            self.ws()
            if self.s.startswith("}", self.i):
                self.i += 1
                return table
            while True:
                parts = self.key()
                self.ws()
                if not self.s.startswith("=", self.i):
                    raise self.error("expected '=' in an inline table")
                self.i += 1
                self.ws()
                _descend(table, parts[:-1], self)[parts[-1]] = self.value()
                self.ws()
                if self.s.startswith(",", self.i):
                    self.i += 1
                    self.ws()
                elif self.s.startswith("}", self.i):
                    self.i += 1
                    return table
                else:
                    raise self.error("expected ',' or '}' in an inline table")
        m = re.compile(r"[^,\]\}\r\n#]+").match(s, i)
        token = m.group().strip() if m else ""
        if not token:
            raise self.error("expected a value")
        self.i = i + len(m.group().rstrip(" \t"))
        if token in ("true", "false"):
            return token == "true"
        if re.fullmatch(r"[+-]?(0|[1-9](_?[0-9])*)", token):
            return int(token.replace("_", ""))
        return Raw(token)


def _escaped(s, index):
    count = 0
    while index - count - 1 >= 0 and s[index - count - 1] == "\\":
        count += 1
    return count % 2 == 1


def _descend(table, parts, parser):
    for part in parts:
        table = table.setdefault(part, {})
        if isinstance(table, list):
            table = table[-1]
        if not isinstance(table, dict):
            raise parser.error(f"key {part} is already a value, not a table")
    return table


def mini_parse(text):
    return _Mini(text).parse()
