"""Why-questions: the hypotheses whose evidence the question reaches.

"为什么我周日晚上总是焦虑", "why do I always get headaches", "what makes me
so tired": the answer the archive can offer is a hypothesis, and a
hypothesis is reached through its supports and contradictions, which are
events in the user's words. Every record or capture the question touches
counts, even through single characters too weak to show on their own (they
are held back as rows, never as paths). A hypothesis comes with the path:
the supports and contradictions the question reached.
"""

import re

from ..patterns import Lazy

CAUSAL = Lazy(
    r"为什么|为啥|为何|干嘛总|怎么老是|怎么总是|怎么又|怎么会|怎么一到|什么原因|啥原因|原因是|是因为什么|凭什么"
    r"|(?<![a-z])(?:why|how come|what makes|what made|what causes|what caused|reason (?:why|for)|cause of)(?![a-z])",
    re.I, needs=("为", "干嘛总", "怎么", "原因", "凭什么", "why", "how come", "what ma", "what cause", "reason", "cause of"))
REACHED = 200  # the question's best-scored documents that count as reached
SKIP = ("rejected", "expired", "superseded", "redirected", "forgotten")


def is_causal(text):
    return CAUSAL.finds(text or "")


def hypotheses(q, reached):
    """[(row, why)] for hypotheses whose supports or contradictions are in `reached` ({key: score}), best first."""
    ai = q.ai
    evidence = {}  # record id -> score of what reached it
    for key, score in reached.items():
        ids = [key[2:]] if key.startswith("r:") else ai.records_citing(key[2:])
        for rid in ids:
            evidence[rid] = max(evidence.get(rid, 0.0), score)
    found = {}
    for rid, score in evidence.items():
        for rel in ("supports", "contradicts"):
            for hid in ai.referrers(rid, rel):
                entry = found.setdefault(hid, {"supports": {}, "contradicts": {}})
                entry[rel][rid] = max(entry[rel].get(rid, 0.0), score)
    out = []
    for hid, entry in found.items():
        rec = ai.record(hid) or {}
        if rec.get("kind") not in ("hypothesis", "intent") or rec.get("status") in SKIP:
            continue
        row = q.recall.doc_for_key(f"r:{hid}")
        if row is None or not q.admits(row, direct=False)[0]:
            continue
        reached_ids = list(entry["supports"]) + list(entry["contradicts"])
        weight = (len(reached_ids), sum(entry["supports"].values()) + sum(entry["contradicts"].values()))
        why = {"channel": "causal", "supports_reached": sorted(entry["supports"]),
               "contradicts_reached": sorted(entry["contradicts"]),
               "via": [hid] + sorted(entry["supports"]) + sorted(entry["contradicts"])}
        out.append((weight, hid, row, why))
    out.sort(key=lambda x: (-x[0][0], -x[0][1], x[1]))
    return [(row, why) for _w, _h, row, why in out]
