"""Loaders for the external benchmarks, read at run time from the data folder.

Each loader turns one benchmark into haystacks: the messages one archive holds
and the questions asked of that archive only. Nothing from the datasets is
stored in the repository; texts live in memory for the duration of a run.

A message is {"ref", "speaker", "role", "text", "occurred_at", "session_id"}:
`ref` is unique within its haystack and is what gold evidence points at.
A question is {"qid", "text", "category", "gold_refs", "as_of"}.

Every set is split into a dev part (settings may be tuned on it) and a test
part (reported, never tuned on) by haystack, so no conversation or memory bank
is in both: `split_of` below, fixed by SPLIT_SEED.
"""

import dataclasses
import glob
import hashlib
import json
import os
import random
import re

SAMPLE_SEED = 20240601  # --limit samples are drawn with this seed: same N, same questions
SPLIT_SEED = 15  # the dev/test split; changing it would make every reported test figure a new one
SPLITS = ("dev", "test")


@dataclasses.dataclass
class Haystack:
    name: str
    messages: list
    questions: list
    lang: str = "en"
    stratum: str = ""  # haystacks are split half and half within each stratum
    split: str = ""  # "dev" or "test", set by select()
    locomo: tuple = None  # (path, sample_id): import with the product's LoCoMo importer


@dataclasses.dataclass
class Loaded:
    name: str
    haystacks: list
    notes: dict
    files: dict  # relative path -> sha256 of what was read
    references: dict = dataclasses.field(default_factory=dict)  # published runs: {name: {qid: [ref, ...]}}
    overall_excludes: tuple = ()
    limit_unit: str = "haystacks"  # what --limit counts: "first haystacks", "haystacks" (sampled) or "questions"


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _sample(items, limit):
    """A deterministic sample of `limit` items, kept in their original order."""
    if limit is None or limit >= len(items):
        return list(items)
    keep = set(random.Random(SAMPLE_SEED).sample(range(len(items)), limit))
    return [item for n, item in enumerate(items) if n in keep]


# --- LoCoMo ------------------------------------------------------------------------

LOCOMO_FILE = os.path.join("locomo", "locomo10.json")
# Category numbers as the data has them; names as they are commonly read (the file does not name them).
LOCOMO_CATEGORIES = {1: "1 multi-hop", 2: "2 temporal", 3: "3 open-domain", 4: "4 single-hop",
                     5: "5 adversarial"}
_EVIDENCE_PART = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")


def resolve_evidence(raw, valid):
    """Map one evidence string to dialogue ids present in the conversation.

    Returns (ids, status): status is "ok" (as written), "repaired" (a list
    written as one string, a stray colon or a leading zero: "D8:6; D9:17",
    "D:11:26", "D30:05"), "missing" (well formed but no such turn) or
    "malformed" (nothing that reads as D<session>:<turn>).
    """
    if raw in valid:
        return [raw], "ok"
    parts = [f"D{int(s)}:{int(t)}" for s, t in _EVIDENCE_PART.findall(raw if isinstance(raw, str) else "")]
    if not parts:
        return [], "malformed"
    found = [p for p in parts if p in valid]
    if not found:
        return [], "missing"
    return found, "repaired"


def split_of(loaded):
    """{haystack name: "dev" | "test"}.

    Within each stratum the haystack names are sorted and shuffled with a
    generator seeded by SPLIT_SEED, the dataset and the stratum (string seeds
    are hashed with SHA-512, so the split does not depend on PYTHONHASHSEED);
    the first half (rounded down) is dev, the rest test.
    """
    strata = {}
    for hs in loaded.haystacks:
        strata.setdefault(hs.stratum, []).append(hs.name)
    out = {}
    for stratum, names in sorted(strata.items()):
        names = sorted(names)
        random.Random(f"{SPLIT_SEED}:{loaded.name}:{stratum}").shuffle(names)
        for n, name in enumerate(names):
            out[name] = "dev" if n < len(names) // 2 else "test"
    return out


def select(loaded, split, limit=None):
    """The haystacks of one split ("dev", "test" or "all"), cut to --limit; each tagged with its split."""
    parts = split_of(loaded)
    kept = [hs for hs in loaded.haystacks if split == "all" or parts[hs.name] == split]
    for hs in kept:
        hs.split = parts[hs.name]
    if limit is not None:
        if loaded.limit_unit == "first haystacks":
            kept = kept[:limit]
        elif loaded.limit_unit == "haystacks":
            kept = _sample(kept, limit)
        else:
            chosen = set(_sample([(hs.name, q["qid"]) for hs in kept for q in hs.questions], limit))
            for hs in kept:
                hs.questions = [q for q in hs.questions if (hs.name, q["qid"]) in chosen]
            kept = [hs for hs in kept if hs.questions]
    loaded.haystacks = kept
    return loaded


def load_locomo(data_dir):
    from personal_understanding import importers

    path = os.path.join(data_dir, LOCOMO_FILE)
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    messages = importers.parse("locomo", path)
    by_sample = {}
    for msg in messages:
        by_sample.setdefault(msg.meta["sample_id"], []).append(msg)
    samples = data
    ev = {"evidence_ids": 0, "ok": 0, "repaired": [], "missing": [], "malformed": []}
    dropped = {}
    haystacks = []
    for sample in samples:
        sid = sample["sample_id"]
        msgs = by_sample.get(sid, [])
        valid = {m.meta["dia_id"] for m in msgs}
        days = [m.occurred_at[:10] for m in msgs if m.occurred_at]
        as_of = max(days) if days else None
        questions = []
        for n, qa in enumerate(sample.get("qa", [])):
            category = LOCOMO_CATEGORIES.get(qa.get("category"), str(qa.get("category")))
            gold = []
            for raw in qa.get("evidence") or []:
                ev["evidence_ids"] += 1
                ids, status = resolve_evidence(raw, valid)
                if status == "ok":
                    ev["ok"] += 1
                else:
                    ev[status].append({"sample": sid, "question": n, "evidence": raw, "resolved": ids})
                gold += [f"{sid}:{d}" for d in ids]
            if not gold:
                dropped[category] = dropped.get(category, 0) + 1
                continue
            questions.append({"qid": f"{sid}#{n}", "text": qa["question"], "category": category,
                              "gold_refs": list(dict.fromkeys(gold)), "as_of": as_of})
        haystacks.append(Haystack(
            name=sid, lang="en", locomo=(path, sid), questions=questions,
            messages=[{"ref": m.ref, "speaker": m.speaker, "role": m.role, "text": m.text,
                       "occurred_at": m.occurred_at, "session_id": m.session_id} for m in msgs]))
    notes = {
        "query": "the question text",
        "as_of": "the date of the conversation's last session",
        "gold": "evidence dialogue ids -> captures via the import mapping (ref '<sample_id>:<dia_id>')",
        "evidence": {"evidence_ids": ev["evidence_ids"], "ok": ev["ok"], "repaired": len(ev["repaired"]),
                     "missing": len(ev["missing"]), "malformed": len(ev["malformed"]),
                     "not_ok_detail": ev["repaired"] + ev["missing"] + ev["malformed"]},
        "questions_dropped_no_valid_gold": dropped,
        "category_5": "adversarial questions are reported as their own category and left out of 'overall'",
        "image_turns": "image captions are not part of a turn's text (the importer keeps them in meta)",
    }
    return Loaded("locomo", haystacks, notes, {LOCOMO_FILE: sha256_file(path)},
                  overall_excludes=(LOCOMO_CATEGORIES[5],), limit_unit="first haystacks")


# --- LongMemEval (oracle) -------------------------------------------------------------

LME_DIR = os.path.join("longmemeval", "oracle")
_LME_TIME = re.compile(r"\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\([A-Za-z]+\))?\s*(?:(\d{1,2}):(\d{2}))?\s*")


def lme_time(text):
    """'2023/05/21 (Sun) 19:50' -> '2023-05-21T19:50:00Z' (the data gives no zone)."""
    m = _LME_TIME.fullmatch(text or "")
    if not m:
        raise ValueError(f"unreadable LongMemEval date {text!r}")
    day = f"{int(m[1]):04d}-{int(m[2]):02d}-{int(m[3]):02d}"
    return day if m[4] is None else f"{day}T{int(m[4]):02d}:{m[5]}:00Z"


def load_longmemeval(data_dir):
    folder = os.path.join(data_dir, LME_DIR)
    files = sorted(glob.glob(os.path.join(folder, "*.json")))
    if not files:
        raise FileNotFoundError(f"no LongMemEval files in {folder}")
    digest = hashlib.sha256()
    for path in files:
        digest.update(os.path.basename(path).encode() + b"\0" + sha256_file(path).encode() + b"\n")
    abstention, abstention_with_turns, empty_turns, gold_lost = 0, 0, 0, 0
    haystacks = []
    for path in files:
        with open(path, encoding="utf-8") as fh:
            item = json.load(fh)
        qid = item["question_id"]
        sessions = item["haystack_sessions"]
        marked = sum(1 for s in sessions for t in s if t.get("has_answer"))
        if qid.endswith("_abs"):
            abstention += 1
            abstention_with_turns += marked > 0
            continue
        messages, gold = [], []
        for si, (sess_id, date, turns) in enumerate(zip(item["haystack_session_ids"], item["haystack_dates"], sessions)):
            when = lme_time(date)
            for ti, turn in enumerate(turns):
                ref = f"{si}:{ti}"
                text = turn.get("content") or ""
                if not text.strip():
                    empty_turns += 1
                    gold_lost += bool(turn.get("has_answer"))
                    continue
                role = turn.get("role")
                messages.append({"ref": ref, "speaker": role or "unknown", "role": "user" if role == "user" else "other",
                                 "text": text, "occurred_at": when, "session_id": str(sess_id)})
                if turn.get("has_answer"):
                    gold.append(ref)
        question = {"qid": qid, "text": item["question"], "category": item["question_type"], "gold_refs": gold,
                    "as_of": lme_time(item["question_date"])}
        haystacks.append(Haystack(name=qid, messages=messages, questions=[question] if gold else [], lang="en",
                                  stratum=item["question_type"]))
    notes = {
        "query": "the question text",
        "as_of": "question_date",
        "gold": "turns marked has_answer (user and assistant turns are both imported)",
        "abstention_excluded": abstention,
        "abstention_with_marked_turns": abstention_with_turns,
        "empty_turns_skipped": empty_turns,
        "gold_turns_lost_as_empty": gold_lost,
    }
    return Loaded("longmemeval", haystacks, notes, {LME_DIR + "/*.json": digest.hexdigest()})


# --- MADial-Bench (zh) --------------------------------------------------------------------

MADIAL_MEMORY = os.path.join("madial-bench", "zh", "MADial-Bench-zh-memory.json")
MADIAL_DIALOGUE = os.path.join("madial-bench", "zh", "MADial-Bench-zh-dialogue.json")
MADIAL_REFERENCES = os.path.join("madial-bench", "reference_runs", "zh")
_TAGGED = re.compile(r"\s*<([^<>]+)>\s*[:：]\s*(.*?)\s*", re.S)


def _jsonl(path):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def madial_turn(line):
    """'<Bart>:"text"\\n' -> ("Bart", "text"); markers such as <BOD> -> None."""
    m = _TAGGED.fullmatch(line)
    if not m:
        return None
    text = m[2]
    if len(text) >= 2 and text[0] in "\"“" and text[-1] in "\"”":
        text = text[1:-1]
    return m[1], text


def madial_query(dialogue, test_turn):
    """The dialogue before the first turn to be predicted, one turn per line, speaker tags removed.

    The benchmark's own retrieval embeds ''.join(dialogue[:test_turn[0]]).
    """
    lines = []
    for line in dialogue[:test_turn[0]]:
        turn = madial_turn(line)
        if turn and turn[1].strip():
            lines.append(turn[1])
    return "\n".join(lines)


def load_madial(data_dir):
    mem_path = os.path.join(data_dir, MADIAL_MEMORY)
    dia_path = os.path.join(data_dir, MADIAL_DIALOGUE)
    memories = {}
    for line in _jsonl(mem_path):
        for key, value in line.items():
            memories[str(value.get("id", key))] = value
    dialogues = _jsonl(dia_path)
    names = {}
    for d in dialogues:
        for line in d["dialogue"]:
            turn = madial_turn(line)
            if turn and turn[0] != "Assistant":
                names.setdefault(d["user-id"], turn[0])
                break
    banks = {}
    for mid, mem in sorted(memories.items(), key=lambda kv: int(kv[0])):
        banks.setdefault(mem["user-id"], []).append((mid, mem))
    haystacks = []
    for uid in sorted(banks):
        bank = banks[uid]
        as_of = max(mem["time"] for _mid, mem in bank)
        speaker = names.get(uid, f"user-{uid}")
        messages = [{"ref": mid, "speaker": speaker, "role": "user", "text": mem["event"], "occurred_at": mem["time"],
                     "session_id": None} for mid, mem in bank]
        questions = [{"qid": str(d["id"]), "text": madial_query(d["dialogue"], d["test-turn"]), "category": "all",
                      "gold_refs": [str(r) for r in d["relevant-id"]], "as_of": as_of}
                     for d in dialogues if d["user-id"] == uid]
        haystacks.append(Haystack(name=f"user-{uid}", messages=messages, questions=questions, lang="zh"))
    files = {MADIAL_MEMORY: sha256_file(mem_path), MADIAL_DIALOGUE: sha256_file(dia_path)}
    references = {}
    for path in sorted(glob.glob(os.path.join(data_dir, MADIAL_REFERENCES, "*_top_20_ids.json"))):
        name = os.path.basename(path)[:-len("_top_20_ids.json")]
        name = name[:-3] if name.endswith("_zh") else name
        references[name] = {str(r["id"]): [str(i) for i in r["top_20_ids"]] for r in _jsonl(path)}
        files[os.path.relpath(path, data_dir)] = sha256_file(path)
    notes = {
        "query": "the dialogue before its first test turn (both speakers, speaker tags removed), as the benchmark's "
                 "own retrieval does",
        "haystack": "one archive per user: that user's memory bank, one capture per memory (its event text; "
                    "occurred_at = the memory's date; no session, so each memory is its own episode)",
        "as_of": "the date of the user's latest memory",
        "gold": "the dialogue's relevant-id memories",
        "references": "published retrievers' top-20 rankings, scored with the same metric code",
        "reference_input": "the published runs embedded each memory with its scene and emotion labels",
    }
    return Loaded("madial", haystacks, notes, files, references=references, limit_unit="questions")


LOADERS = {"locomo": load_locomo, "longmemeval": load_longmemeval, "madial": load_madial}
