"""What indexing reads from a bulk import's messages, worked out ahead in a second process.

Indexing an imported message is a third reading its text (tokenizing it and weighing its terms,
index.text_terms) and its time expressions (index.capture_reading), and both depend on little
but the text: its day, and the words the archive has learned. An import of many messages starts
a helper process that reads the next chunk while this process indexes the batch before; it is
told the archive's words after each batch. The helper is only ever a shortcut: an answer for
another text or day, or one read with archive words that differ from this process's in that
text, is worked out here as before, and if the helper cannot start or stops, the import goes on
without it.

Messages between the two are length-prefixed pickles over the helper's stdin and stdout: each
side talks only to the other, never to a file.
"""

import os
import pickle
import struct
import subprocess
import sys

MIN_MESSAGES = 1000  # fewer: the helper's start (some 60 ms) would cost more than it saves
CHUNK = 500  # messages asked at a time: the helper works on one chunk while this process indexes another
_HEAD = struct.Struct("!I")
_SERVE = ("import sys; sys.path.insert(0, sys.argv[1]); "
          "from personal_understanding.retrieval.ahead import serve; serve()")


def _send(stream, obj):
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEAD.pack(len(data)) + data)
    stream.flush()


def _receive(stream):
    """The next message, or None at the end of the stream (or a torn one)."""
    head = stream.read(_HEAD.size)
    if len(head) < _HEAD.size:
        return None
    size = _HEAD.unpack(head)[0]
    data = stream.read(size)
    return pickle.loads(data) if len(data) == size else None


def serve():
    """The helper's side: for each (words added, words removed, [(key, text, when)]) read, write
    [(key, (text, when, capture_reading, text_terms))], the terms read with the archive words as told."""
    from .index import capture_reading, text_terms
    from .lexicon import Lexicon

    source, sink = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # anything printed by mistake stays out of the answers
    words, lex = set(), Lexicon()
    while True:
        asked = _receive(source)
        if asked is None:
            return
        added, removed, items = asked
        words.difference_update(removed)
        words.update(added)
        if removed:
            lex = Lexicon(sorted(words))
        elif added:
            lex.add_words(added)
        _send(sink, [(key, (text, when, capture_reading(text, when), text_terms(text, lex) if text else None))
                     for key, text, when in items])


def _python():
    """The interpreter to start the helper with: sys.executable when it is one (an application that
    embeds Python names itself there, and must not be started again)."""
    name = os.path.basename(sys.executable or "").lower()
    return sys.executable if name.startswith("python") else None


class Readings:
    """capture_reading and text_terms of an import's messages, asked of a helper process a chunk ahead.

    `items` are (capture_id, text, when) in the order the import registers them; take(ids) gives
    {capture_id: (text, when, reading, terms)} of those it has (index.open_recall's `readings`).
    The first chunk is left to this process: it is indexed before the helper could have read it.
    """

    def __init__(self, items):
        self._items, self._have = items, {}
        self._next = min(CHUNK, len(items))  # items before it are asked (or left to this process)
        self._place = {item[0]: n for n, item in enumerate(items)}
        self._words, self._told = set(), set()  # the archive words as last learned; as the helper holds them
        self._proc, self._pending = None, None  # (first, end) of the chunk the helper is reading
        python = _python() if len(items) >= MIN_MESSAGES else None
        if python:
            try:
                self._proc = subprocess.Popen(
                    [python, "-I", "-c", _SERVE, os.path.dirname(os.path.dirname(os.path.dirname(__file__)))],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            except OSError:
                self._proc = None
            self._ask()

    def _ask(self):
        """Send the next chunk, if any is left (the helper has answered all it was asked)."""
        chunk = self._items[self._next:self._next + CHUNK]
        if self._proc is None or not chunk:
            return
        added, removed = sorted(self._words - self._told), sorted(self._told - self._words)
        try:
            _send(self._proc.stdin, (added, removed, chunk))
            self._told = set(self._words)
        except (OSError, ValueError):  # the helper is gone
            self._stop()
            return
        self._pending = (self._next, self._next + len(chunk))
        self._next += len(chunk)

    def take(self, ids):
        """The readings of `ids` worked out so far, waiting for the helper's answer when it holds some."""
        while self._pending is not None:
            lo, hi = self._pending
            if not any(lo <= self._place.get(i, -1) < hi for i in ids):
                break
            try:
                answers = _receive(self._proc.stdout)
            except Exception:  # noqa: BLE001  (a torn or garbled answer: the helper is not to be trusted further)
                answers = None
            self._pending = None
            if answers is None:  # it stopped: what is left is worked out here
                self._stop()
                break
            self._have.update(answers)
            self._ask()
        return {i: self._have.pop(i) for i in ids if i in self._have}

    def learned(self, words):
        """The archive's words now (the recall index's lexicon): the next chunk is read with them."""
        self._words = set(words)

    def _stop(self):
        proc, self._proc, self._pending = self._proc, None, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def close(self):
        self._stop()
