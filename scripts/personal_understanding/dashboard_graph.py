"""The dashboard's graph: every kind of record and the follow-ups as nodes, their references as links.

Bounded to GRAPH_NODES nodes: the best-connected hubs, then the nodes most tied to
them, so the excerpt stays connected. The page draws it, and builds one item's
neighbourhood from that item's own links.
"""

from collections import Counter

GRAPH_NODES = 300
GRAPH_EDGES = 2000
KNOWLEDGE = ("fact", "preference", "rule", "model", "value", "heuristic", "fragment")
LINKS = ("entity", "related", "supports", "contradicts", "supersedes")


def node_kind(rec):
    kind = rec.get("kind")
    if kind == "entity":
        return "concept" if rec.get("entity_type") == "concept" else "entity"
    if kind in KNOWLEDGE:
        return "knowledge"
    if kind == "intent":
        return "hypothesis"
    return kind


def graph(live, refs, resolve, fus, cited_by):
    nodes = {rid: node_kind(r) for rid, r in live.items()}
    labels = {rid: r.get("title") for rid, r in live.items()}
    for item in fus:
        nodes[item["id"]] = "followup"
        labels[item["id"]] = item.get("question")
    edges = {}
    for rid, rel, target in refs:
        target = resolve(target)
        if rel in LINKS and rid in nodes and target in nodes and rid != target:
            edges.setdefault(tuple(sorted((rid, target))), rel)
    for item in fus:  # a follow-up sits beside what was derived from the same words
        for rid in cited_by.get(item.get("capture_id"), ()):
            if rid in nodes:
                edges.setdefault(tuple(sorted((item["id"], rid))), "raised")
    degree = Counter(n for pair in edges for n in pair)
    salience = {rid: live[rid].get("salience") or 0 for rid in live}
    order = sorted(nodes, key=lambda n: (-degree.get(n, 0), -salience.get(n, 0), n))
    if len(order) <= GRAPH_NODES:
        chosen = order
    else:
        chosen = order[:GRAPH_NODES // 8]
        hubs = set(chosen)
        ties = Counter(y for a, b in edges for x, y in ((a, b), (b, a)) if x in hubs and y not in hubs)
        chosen += sorted(ties, key=lambda n: (-ties[n], -degree.get(n, 0), n))[:GRAPH_NODES - len(chosen)]
        taken = set(chosen)
        chosen += [n for n in order if n not in taken][:GRAPH_NODES - len(chosen)]
    taken = set(chosen)
    linked = {n for a, b in edges if a in taken and b in taken for n in (a, b)}
    if linked:  # a node with no link inside the excerpt says nothing in a picture of links
        chosen = [n for n in chosen if n in linked]
    position = {n: i for i, n in enumerate(chosen)}
    kept = [[position[a], position[b], rel] for (a, b), rel in sorted(edges.items()) if a in position and b in position]
    return {"nodes": [{"id": n, "kind": nodes[n], "label": labels[n], "degree": degree.get(n, 0)} for n in chosen],
            "edges": kept[:GRAPH_EDGES], "total_nodes": len(nodes), "total_edges": len(edges),
            "shown_edges": min(len(kept), GRAPH_EDGES), "kinds": sorted(set(nodes.values()))}
