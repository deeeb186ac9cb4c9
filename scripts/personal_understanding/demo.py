"""The demo: a short sample conversation through the agent's path (the turn tools of the MCP server).

Each user message is one `turn` call; each personal turn adds one `remember` call; a question to
the memory is answered from the turn itself. Runs on a new temporary archive, or on --root when
that archive holds nothing yet (--force writes into one that does). Prints a readable account on
stderr and the proof as one JSON object on stdout.
"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from . import archive, schema, validate
from .archive_index import open_index
from .dashboard import open_dashboard
from .errors import PuError
from .pipeline import pipeline_view
from .reads import recall
from .remember import remember
from .turn import turn

CONVERSATION = [
    "我妹妹小雨下个月在杭州结婚，我有点舍不得，也在纠结要不要请一周假回去帮忙。",
    "how do I turn a python list into a set?",
    "嗯",
    "你还记得我妹妹什么时候结婚吗？",
]
ASSOCIATION_QUERY = "想家了"  # shares no word with the conversation: found through the concept card


def _say(text=""):
    print(text, file=sys.stderr)


def holds_material(root):
    """Does this archive already hold someone's words or records?"""
    if not archive.exists(root):
        return False
    index = open_index(root)
    return any(index.count(f"SELECT COUNT(*) FROM {table}") for table in ("receipts", "captures", "records"))


def _why(row):
    why = row["why"]
    return why.get("alias") or why.get("matched") or why.get("via") or why.get("channel")


def _first_turn(root, run, duplicate_ok):
    text = CONVERSATION[0]
    started = turn(root, text, turn_id=f"{run}-t1", session_id=run)
    cid = started["capture_id"]
    sister, concept = f"person-xiaoyu{run[4:]}", f"concept-missing-family{run[4:]}"
    extra = {"allow_duplicate": True} if duplicate_ok else {}
    batch = [
        dict(kind="entity", entity_type="person", title="小雨", id=sister, aliases=["妹妹", "我妹妹", "my sister"],
             domain="family-home", **extra),
        dict(kind="entity", entity_type="concept", title="离家的牵挂", id=concept, aliases=["舍不得", "想家", "放心不下"],
             related_ids=[sister], **extra),
        dict(kind="event", title="小雨在杭州结婚", summary="妹妹小雨下个月在杭州结婚。", entity_refs=[sister, concept],
             domain="family-home", salience=2, date_precision="month", date_basis="source", felt_then="有点舍不得",
             verbatim_refs=[{"capture_id": cid, "start": 0, "end": text.index("，")}], **extra),
        dict(kind="decision", title="要不要请一周假回去帮忙", entity_refs=[sister], status="uncertain",
             subject_key=f"leave-for-wedding{run[4:]}", domain="education-career", **extra),
    ]
    done = remember(root, started["turn_id"], records=batch,
                    followups=[{"question": "婚礼准备得怎么样了？请假的事定了吗？", "expectation": "下个月妹妹结婚，考虑请一周假",
                                "due_rule": "+7d"}])
    index = open_index(root)
    event = next(r for r in done["written"]["records"] if r.startswith("event-"))
    _say(f"turn {started['turn_id']}  user: {text}")
    _say(f"  turn      tier={started['receipt']['tier']} reasons={started['receipt']['reasons']}")
    _say(f"            saved {cid} sha256={started.get('utf8_sha256')}")
    _say(f"  remember  {', '.join(done['written']['records'])}; follow-up {done['written']['followups'][0]}")
    _say(f"            ledger {done['ledger']['status']}; {event} cites {', '.join(sorted(schema.cited_captures(index.record(event))))}")
    _say(f"            may_claim_saved={done['may_claim_saved']}   (2 calls)")
    return {"turn_id": started["turn_id"], "calls": 2, "receipt": started["receipt"],
            "capture": {"capture_id": cid, "utf8_sha256": started.get("utf8_sha256"),
                        "path": index.capture(cid)["path"]},
            "records": done["written"]["records"], "followups": done["written"]["followups"],
            "ledger": dict(done["ledger"], record_to_capture={rid: sorted(schema.cited_captures(index.record(rid)))
                                                              for rid in done["ledger"].get("record_ids", [])}),
            "gate": {"may_claim_saved": done["may_claim_saved"], "gates": done["gate"]["gates"]}}, event


def _plain_turns(root, run):
    out = []
    text = CONVERSATION[1]
    started = turn(root, text, turn_id=f"{run}-t2", session_id=run)
    gate = remember(root, started["turn_id"])
    _say(f"turn {started['turn_id']}  user: {text}")
    _say(f"  turn      tier={started['receipt']['tier']} signal={started['receipt']['signal']}  ->  nothing saved; "
         f"may_claim_saved={gate['may_claim_saved']}   (1 call; the gate call only to show it)")
    out.append({"turn_id": started["turn_id"], "calls": 1, "receipt": started["receipt"], "captured": started["captured"],
                "gate": {"obligations_met": gate["gate"]["obligations_met"], "may_claim_saved": gate["may_claim_saved"]}})
    text = CONVERSATION[2]
    started = turn(root, text, turn_id=f"{run}-t3", session_id=run)
    done = remember(root, started["turn_id"], reason="acknowledgement only, nothing new to derive")
    _say(f"turn {started['turn_id']}  user: {text}")
    _say(f"  turn      low_information={started['receipt']['low_information']}, saved {started['capture_id']}; "
         f"remember closes it: {done['ledger']['status']}; may_claim_saved={done['may_claim_saved']}   (2 calls)")
    out.append({"turn_id": started["turn_id"], "calls": 2, "receipt": started["receipt"],
                "capture": {"capture_id": started["capture_id"]}, "gate": {"may_claim_saved": done["may_claim_saved"]}})
    return out


def _recall_turn(root, run, event, first_capture):
    text = CONVERSATION[3]
    started = turn(root, text, turn_id=f"{run}-t4", session_id=run)
    read = started.get("recall") or started.get("memories") or {"top": []}
    _say(f"turn {started['turn_id']}  user: {text}")
    _say(f"  turn      signal={started['receipt']['signal']} read_turn={started['read_turn']}: answered from this call's recall")
    for row in read["top"][:3]:
        _say(f"  recall    {row['id']} ({row['kind']}) via {_why(row)}")
    calls = 1
    if started["captured"]:  # the classifier took the question for a personal message: close it
        remember(root, started["turn_id"], reason="a question about the wedding; nothing new said")
        calls = 2
    zero = recall(root, ASSOCIATION_QUERY, turn_id=started["turn_id"])
    for assoc in zero.get("associations", [])[:2]:
        _say(f"  associate {ASSOCIATION_QUERY} -> {assoc['id']} along {' -> '.join(assoc['via'])}")
    words = recall(root, mode="deep", ids=[event], turn_id=started["turn_id"])["items"][0]["verbatim"][0]
    _say(f"  words     {words['capture_id']}: {words['spans'][0]['quote']!r} (sha256 {words['utf8_sha256'][:16]}…)")
    top = [r["id"] for r in read["top"]]
    right = bool(top) and (top[0] == first_capture or top[0] == event or top[0].startswith("person-xiaoyu"))
    if not right:
        _say(f"  note      the first row is {top[:1]}, not the turn that said it ({first_capture}) or its records")
    return {"turn_id": started["turn_id"], "calls": calls, "query": text, "read_turn": started["read_turn"],
            "trace_id": read.get("trace_id"), "top": [{"id": r["id"], "why": r["why"]} for r in read["top"][:3]],
            "first_row_is_the_wedding": right, "associations_for_" + ASSOCIATION_QUERY: zero.get("associations", [])[:2],
            "verbatim": words}


def run(root, force=False):
    if holds_material(root) and not force:
        raise PuError("DEMO_ARCHIVE_NOT_EMPTY", f"{root} already holds material; the demo would add its sample family to it",
                      "Run the demo without --root (a new temporary archive), point --root at an empty folder, or pass "
                      "--force to write into this archive anyway.")
    duplicate_ok = holds_material(root)
    archive.init_archive(root)
    run_id = "demo" if not duplicate_ok else "demo-" + os.urandom(3).hex()
    proof = {"root": str(root), "turns": []}
    first, event = _first_turn(root, run_id, duplicate_ok)
    proof["turns"].append(first)
    proof["turns"] += _plain_turns(root, run_id)
    proof["recall"] = _recall_turn(root, run_id, event, first["capture"]["capture_id"])
    report = validate.validate(root)
    _say(f"validate  {report['status']} ({report['checked']['captures']} captures, {report['checked']['records']} records)")
    proof["validate"] = {"status": report["status"], "problems": report["problems"]}
    board = open_dashboard(root, no_open=True)
    pages = pipeline_view(root, latest=4)["pages"]
    _say(f"dashboard {board['page']}")
    _say(f"pipeline  {pages[0]}" + (f" (+{len(pages) - 1} more)" if len(pages) > 1 else ""))
    proof["dashboard"] = board["page"]
    proof["pipeline_pages"] = pages
    return proof


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="demo.py", description="Run a sample conversation through the agent's path and print the proof.",
        epilog="Example:\n  python3 scripts/demo.py                 # a new temporary archive\n"
               "  python3 scripts/demo.py --root /tmp/pu   # an archive of your choice (empty, or --force)\n\n"
               "Prints the proof as one JSON object on stdout and a readable account on stderr.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", help="Archive to use (default: a new temporary folder). It must hold no material yet.")
    parser.add_argument("--force", action="store_true", help="Write the sample conversation into an archive that already "
                                                             "holds material (it adds a second sample family).")
    args = parser.parse_args(argv)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(encoding="utf-8")
        except (AttributeError, ValueError):
            pass
    root = Path(args.root).expanduser().resolve() if args.root else Path(tempfile.mkdtemp(prefix="personal-understanding-demo-"))
    _say(f"archive: {root}\n")
    try:
        proof = run(root, force=args.force)
    except PuError as exc:
        from . import commands
        from .surface import Surface

        print(json.dumps({"error": Surface("cli", commands.COMMANDS).fields(exc.to_dict())}, ensure_ascii=False, indent=2))
        return 1
    print(json.dumps(proof, ensure_ascii=False, indent=2))
    ok = (proof["validate"]["status"] != "failed" and proof["turns"][0]["gate"]["may_claim_saved"])
    return 0 if ok else 1
