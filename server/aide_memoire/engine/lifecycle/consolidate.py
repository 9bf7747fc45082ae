"""Consolidation: cluster related memories and pick an extractive summary of them.

No generative model: the summary is the cluster's most central sentences (by cosine to
the centroid of every sentence in the cluster, near-repeats skipped), put back in date
order, each with its date. A plan names its sentences as character spans of the
sources plus their content hashes, never as text, so that forgetting a source leaves
no copy behind in the review queue; the text is rebuilt when the plan is carried out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core import clock
from ..storage.protocol import Connection
from ..storage.store import content_hash
from .dedup import load_vectors, similar_pairs

if TYPE_CHECKING:
    from ..storage.repositories import MemoryRows

__all__ = [
    "Cluster", "Piece", "find_clusters", "pieces_evidence", "pieces_from_evidence", "render",
    "summarise",
]

Encoder = Callable[[list[str]], Any]

CLUSTER_KINDS = ("note", "learning", "fact")
MIN_CLUSTER = 3
MAX_CLUSTER = 12
MAX_SENTENCES = 6
BONUS = 0.05  # for each of shared tags and shared names (Jaccard), added to the cosine
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)")
_NAME = re.compile(r"\b[A-Z][a-zA-Z0-9_-]{2,}\b")


@dataclass(frozen=True)
class Piece:
    """One chosen sentence: where it is in which memory, and when that memory was."""

    memory_id: str
    start: int
    end: int
    when: datetime


@dataclass
class Cluster:
    ids: list[str]
    similarity: float
    tags: list[str]
    pieces: list[Piece] = field(default_factory=list)
    hashes: dict[str, str] = field(default_factory=dict)
    # Stored vectors of the members: a one-sentence memory's needs no new encoding.
    vectors: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class _Source:
    id: str
    content: str
    tags: frozenset[str]
    names: frozenset[str]
    when: datetime
    importance: float


def _names(text: str) -> frozenset[str]:
    """Capitalised words not opening a sentence: a cheap stand-in for named entities."""
    out: set[str] = set()
    for sentence in _SENTENCE.findall(text):
        words = _NAME.findall(sentence)
        first = sentence.strip().split(" ", 1)[0].strip("\"'(")
        out.update(w.lower() for w in words if w != first)
    return frozenset(out)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def find_clusters(
    rows: MemoryRows, conn: Connection, table: str, namespace: str, threshold: float, *,
    limit: int,
) -> list[Cluster]:
    """Groups of MIN_CLUSTER..MAX_CLUSTER active memories, each similar to its seed."""
    rowids, ids, kinds, vectors = load_vectors(conn, table, namespace)
    keep = [i for i, kind in enumerate(kinds) if kind in CLUSTER_KINDS]
    if len(keep) < MIN_CLUSTER:
        return []
    ids = [ids[i] for i in keep]
    vectors = vectors[keep]
    sources = _sources(rows, conn, ids)
    edges: dict[int, dict[int, float]] = {}
    for i, j, cosine in similar_pairs(vectors, threshold - 2 * BONUS):
        a, b = sources[ids[i]], sources[ids[j]]
        score = cosine + BONUS * (_jaccard(a.tags, b.tags) + _jaccard(a.names, b.names))
        if score >= threshold:
            edges.setdefault(i, {})[j] = score
            edges.setdefault(j, {})[i] = score
    taken: set[int] = set()
    clusters: list[Cluster] = []
    for seed in sorted(edges, key=lambda n: (-len(edges[n]), n)):
        if seed in taken:
            continue
        near = sorted((s, n) for n, s in edges[seed].items() if n not in taken)[::-1]
        members = [seed] + [n for _, n in near[: MAX_CLUSTER - 1]]
        if len(members) < MIN_CLUSTER:
            continue
        taken.update(members)
        sub = vectors[members]
        sims = sub @ sub.T
        count = len(members)
        mean = float((sims.sum() - count) / (count * (count - 1)))
        chosen = [ids[m] for m in members]
        common = set.intersection(*(set(sources[i].tags) for i in chosen))
        clusters.append(Cluster(chosen, round(mean, 4), sorted(common),
                                hashes={i: content_hash(sources[i].content) for i in chosen},
                                vectors={ids[m]: vectors[m] for m in members}))
        if len(clusters) >= limit:
            break
    return clusters


def _sources(rows: MemoryRows, conn: Connection, ids: Sequence[str]) -> dict[str, _Source]:
    out: dict[str, _Source] = {}
    for memory_id, content, tags, observed, created, importance in rows.summary_sources(
        conn, ids
    ):
        when = clock.parse_stored(observed or created)
        assert when is not None
        out[memory_id] = _Source(
            memory_id, content, frozenset(tags), _names(content), when, importance,
        )
    return out


def summarise(rows: MemoryRows, conn: Connection, cluster: Cluster, encode: Encoder) -> Cluster:
    """Choose the cluster's most central sentences (its ``pieces``), in date order."""
    sources = _sources(rows, conn, cluster.ids)
    spans: list[tuple[str, int, int, datetime, str]] = []
    for memory_id in cluster.ids:
        source = sources[memory_id]
        for match in _SENTENCE.finditer(source.content):
            text = match.group().strip()
            if len(text) < 3:
                continue
            start = match.start() + (len(match.group()) - len(match.group().lstrip()))
            spans.append((memory_id, start, start + len(text), source.when, text))
    if not spans:
        return cluster
    count = {i: sum(s[0] == i for s in spans) for i in cluster.ids}
    todo = [k for k, s in enumerate(spans) if count[s[0]] > 1 or s[0] not in cluster.vectors]
    vectors = np.zeros((len(spans), 0), dtype=np.float32)
    if todo:
        encoded = np.asarray(encode([spans[k][4] for k in todo]), dtype=np.float32)
        vectors = np.zeros((len(spans), encoded.shape[1]), dtype=np.float32)
        vectors[todo] = encoded
    for k, s in enumerate(spans):
        if k not in todo:
            stored = np.asarray(cluster.vectors[s[0]], dtype=np.float32)
            if vectors.shape[1] == 0:
                vectors = np.zeros((len(spans), len(stored)), dtype=np.float32)
            vectors[k] = stored
    centroid = vectors.mean(axis=0)
    centroid /= float(np.linalg.norm(centroid)) or 1.0
    centrality = vectors @ centroid
    wanted = min(MAX_SENTENCES, max(MIN_CLUSTER, len(cluster.ids)))
    chosen: list[int] = []
    for index in np.argsort(-centrality, kind="stable").tolist():
        if all(float(vectors[index] @ vectors[c]) < 0.9 for c in chosen):
            chosen.append(index)
        if len(chosen) >= wanted:
            break
    order = sorted(chosen, key=lambda i: (spans[i][3], cluster.ids.index(spans[i][0]),
                                          spans[i][1]))
    cluster.pieces = [Piece(spans[i][0], spans[i][1], spans[i][2], spans[i][3]) for i in order]
    return cluster


def render(pieces: Sequence[Piece], contents: dict[str, str], sources: int) -> str:
    """The summary text: a heading, then one dated line per chosen sentence."""
    days = sorted({p.when.date() for p in pieces})
    span = f"{days[0]:%Y-%m-%d}" + (f" to {days[-1]:%Y-%m-%d}" if len(days) > 1 else "")
    lines = [f"Summary of {sources} memories ({span}):"]
    lines += [
        f"- [{p.when:%Y-%m-%d}] {contents[p.memory_id][p.start : p.end]}" for p in pieces
    ]
    return "\n".join(lines)


def pieces_evidence(cluster: Cluster) -> dict[str, Any]:
    return {
        "sources": cluster.ids,
        "hashes": cluster.hashes,
        "similarity": cluster.similarity,
        "tags": cluster.tags,
        "pieces": [[p.memory_id, p.start, p.end, clock.format_time(p.when)]
                   for p in cluster.pieces],
    }


def pieces_from_evidence(evidence: dict[str, Any]) -> list[Piece]:
    out = []
    for memory_id, start, end, when in evidence.get("pieces", []):
        moment = clock.parse_stored(when)
        assert moment is not None
        out.append(Piece(str(memory_id), int(start), int(end), moment))
    return out
