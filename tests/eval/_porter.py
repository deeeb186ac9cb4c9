"""The Porter (1980) suffix-stripping stemmer, for the strong BM25 baseline.

Written from the algorithm as published (M. F. Porter, "An algorithm for
suffix stripping", Program 14(3), 1980): five steps of suffix rules, each
guarded by the measure m of the stem ([C](VC)^m[V]). In steps 2 to 4 the
longest matching suffix is taken; when its condition fails the word is left
as it is for that step. Lower-case ASCII words only; others pass unchanged.
"""

_VOWELS = "aeiou"


def _consonant(word, i):
    ch = word[i]
    if ch in _VOWELS:
        return False
    if ch == "y":
        return i == 0 or not _consonant(word, i - 1)
    return True


def _measure(stem):
    """m in [C](VC)^m[V]."""
    m, i, n = 0, 0, len(stem)
    while i < n and _consonant(stem, i):
        i += 1
    while i < n:
        while i < n and not _consonant(stem, i):
            i += 1
        if i >= n:
            break
        while i < n and _consonant(stem, i):
            i += 1
        m += 1
    return m


def _has_vowel(stem):
    return any(not _consonant(stem, i) for i in range(len(stem)))


def _double_consonant(word):
    return len(word) >= 2 and word[-1] == word[-2] and _consonant(word, len(word) - 1)


def _cvc(word):
    """Ends consonant-vowel-consonant, the last not w, x or y (hop, not hoop or snow)."""
    n = len(word)
    return (n >= 3 and _consonant(word, n - 1) and not _consonant(word, n - 2) and _consonant(word, n - 3)
            and word[-1] not in "wxy")


_STEP2 = (("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"),
          ("abli", "able"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"), ("ization", "ize"),
          ("ation", "ate"), ("ator", "ate"), ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"),
          ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"))
_STEP3 = (("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""), ("ness", ""))
_STEP4 = ("al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism",
          "ate", "iti", "ous", "ive", "ize")


def _longest(word, rules):
    best = None
    for suffix, repl in rules:
        if word.endswith(suffix) and (best is None or len(suffix) > len(best[0])):
            best = (suffix, repl)
    return best


def _step1(w):
    if w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("ies"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    again = False
    if w.endswith("eed"):
        if _measure(w[:-3]) > 0:
            w = w[:-1]
    elif w.endswith("ed") and _has_vowel(w[:-2]):
        w, again = w[:-2], True
    elif w.endswith("ing") and _has_vowel(w[:-3]):
        w, again = w[:-3], True
    if again:
        if w.endswith(("at", "bl", "iz")):
            w += "e"
        elif _double_consonant(w) and w[-1] not in "lsz":
            w = w[:-1]
        elif _measure(w) == 1 and _cvc(w):
            w += "e"
    if w.endswith("y") and _has_vowel(w[:-1]):
        w = w[:-1] + "i"
    return w


def stem(word):
    if len(word) <= 2 or not (word.isascii() and word.isalpha() and word.islower()):
        return word
    w = _step1(word)
    for rules in (_STEP2, _STEP3):
        hit = _longest(w, rules)
        if hit and _measure(w[:-len(hit[0])]) > 0:
            w = w[:-len(hit[0])] + hit[1]
    hit = _longest(w, [(s, "") for s in _STEP4])
    if hit:
        base = w[:-len(hit[0])]
        if _measure(base) > 1 and (hit[0] != "ion" or base[-1:] in ("s", "t")):
            w = base
    if w.endswith("e"):
        base = w[:-1]
        m = _measure(base)
        if m > 1 or (m == 1 and not _cvc(base)):
            w = base
    if w.endswith("ll") and _measure(w) > 1:
        w = w[:-1]
    return w
