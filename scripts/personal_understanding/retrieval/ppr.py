"""Associative recall: personalized PageRank over the record graph.

The graph is what records point at (entity_refs, related_ids, supports,
contradicts, supersedes), read both ways, with redirects resolved. Mass starts
at the seeds (what the query actually hit) and spreads by local push, so only
the neighbourhood of the seeds is touched, whatever the archive size. Hubs
(entities with very many links, "我妈" in a long archive) receive mass but do
not relay it: otherwise everything would be one hop from everything.
Each reached node keeps the path it was first reached by (`via`).
"""

RELS = ("entity", "related", "supports", "contradicts", "supersedes")
ALPHA = 0.2  # teleport back to the seeds: keeps mass near what the query hit
EPSILON = 1e-4
MAX_PUSHES = 4000
HUB_DEGREE = 40


class Graph:
    """Neighbours fetched from the index on demand and cached for one query."""

    def __init__(self, archive_index):
        self.ai = archive_index
        self.cache = {}

    def neighbours(self, node):
        if node not in self.cache:
            db = self.ai.db
            marks = ",".join("?" * len(RELS))
            out = {r[0] for r in db.execute(
                f"SELECT target FROM record_refs WHERE record_id=? AND rel IN ({marks})", (node,) + RELS)}
            out |= {r[0] for r in db.execute(
                f"SELECT record_id FROM record_refs WHERE target=? AND rel IN ({marks})", (node,) + RELS)}
            resolved = {self.ai.resolve(n) for n in out}
            resolved.discard(node)
            self.cache[node] = sorted(resolved)
        return self.cache[node]


def personalized_pagerank(graph, seeds):
    """seeds: {node: weight}. Returns ({node: score}, {node: parent})."""
    total = sum(seeds.values()) or 1.0
    residual = {n: w / total for n, w in seeds.items()}
    score, parent = {}, {n: None for n in seeds}
    queue = list(residual)
    pushes = 0
    while queue and pushes < MAX_PUSHES:
        node = queue.pop(0)
        mass = residual.get(node, 0.0)
        nbrs = graph.neighbours(node)
        degree = max(1, len(nbrs))
        if mass < EPSILON:
            continue
        pushes += 1
        residual[node] = 0.0
        score[node] = score.get(node, 0.0) + ALPHA * mass
        if len(nbrs) > HUB_DEGREE and node not in seeds:
            continue  # a hub absorbs what reaches it but relays nothing
        if not nbrs:
            continue
        share = (1 - ALPHA) * mass / degree
        for other in nbrs:
            if other not in parent:
                parent[other] = node
            before = residual.get(other, 0.0)
            residual[other] = before + share
            if before < EPSILON <= residual[other]:
                queue.append(other)
    return score, parent


def path_to(node, parent):
    path = [node]
    while parent.get(path[-1]) is not None and len(path) < 12:
        path.append(parent[path[-1]])
    return list(reversed(path))
