"""What the wiki export reads from a store, and the Markdown pages it makes of it.

``collect`` reads one namespace in a single read: its visible memories (active or
superseded; never held for review, archived or forgotten - forgotten rows no longer
exist), their facts, entities and the entity graph. ``render`` turns that into pages:

- ``entities/<name>.md``: current facts first (value, since when, the memory it came
  from), then superseded facts (from, to, the memory that replaced it), the memories that
  mention the entity (current first, then superseded ones with their replacement), related
  entities as ``[[links]]`` and backlinks (every page that links here);
- ``decisions/<date>-<words>-<hash>.md``: one per memory tagged as a decision or pinned;
- ``index.md``: every entity and decision page;
- ``unfiled.md``: the notes no entity page shows (current, then superseded), so that a
  replaced note is in the wiki even when it names nobody.

Nothing in a page depends on the time of the export, so an unchanged store renders the
same bytes. The line shapes below are what lint.py reads back (provenance, supersession).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..core import clock
from ..core.domain import PINNED_TAGS
from ..core.models import MemoryRecord
from ..storage.protocol import Connection
from .names import page_stem

__all__ = [
    "BACKLINKS", "CURRENT_FACTS", "CURRENT_MEMORIES", "FACT_SECTIONS", "MARKER",
    "SUPERSEDED_FACTS", "SUPERSEDED_MEMORIES", "Snapshot", "collect", "render",
]

MARKER = "aide-memoire"  # the front-matter key of every exported page: its type
CURRENT_FACTS = "Current facts"
SUPERSEDED_FACTS = "Superseded facts"
CURRENT_MEMORIES = "Memories"
SUPERSEDED_MEMORIES = "Superseded memories"
BACKLINKS = "Backlinks"
FACT_SECTIONS = (CURRENT_FACTS, SUPERSEDED_FACTS, CURRENT_MEMORIES, SUPERSEDED_MEMORIES)
QUOTE_CHARS = 400
RELATED_MAX = 12
MEMORIES_MAX = 50
UNFILED = "unfiled.md"
VISIBLE = ("active", "superseded")


@dataclass
class FactRow:
    subject: str
    predicate: str
    obj: str
    object_text: str
    memory_id: str
    valid_from: str
    valid_to: str | None
    ended_by: str | None


@dataclass
class Entity:
    key: str
    display: str
    stem: str = ""
    memories: list[str] = field(default_factory=list)


@dataclass
class Snapshot:
    namespace: str
    memories: dict[str, MemoryRecord]
    entities: dict[str, Entity]
    facts: list[FactRow]
    edges: list[tuple[str, str, float]]

    # Lookups by entity, made once: a page per entity must not scan every fact and edge.
    @functools.cached_property
    def facts_of(self) -> dict[str, list[FactRow]]:
        out: dict[str, list[FactRow]] = {}
        for fact in self.facts:
            out.setdefault(fact.subject, []).append(fact)
        return out

    @functools.cached_property
    def edges_of(self) -> dict[str, list[tuple[float, str]]]:
        out: dict[str, list[tuple[float, str]]] = {}
        for a, b, weight in self.edges:
            out.setdefault(a, []).append((weight, b))
            out.setdefault(b, []).append((weight, a))
        return out

    @functools.cached_property
    def entities_of(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for key, entity in self.entities.items():
            for memory_id in entity.memories:
                out.setdefault(memory_id, []).append(key)
        return out


def collect(
    conn: Connection, page: Callable[[Connection, str, int, int], list[tuple[int, MemoryRecord]]],
    namespace: str, mask: Callable[[MemoryRecord], MemoryRecord],
    mask_text: Callable[[str], str],
) -> Snapshot:
    """Everything the pages show, read in one transaction ``conn`` is in."""
    memories: dict[str, MemoryRecord] = {}
    by_rowid: dict[int, str] = {}
    after = 0
    while True:
        rows = page(conn, namespace, after, 500)
        if not rows:
            break
        for rowid, record in rows:
            if record.status in VISIBLE:
                memories[record.id] = mask(record)
                by_rowid[rowid] = record.id
        after = rows[-1][0]
    entities: dict[str, Entity] = {}
    ids: dict[int, str] = {}
    for eid, name, display in conn.execute(
        "SELECT id, name, display FROM entities WHERE namespace = ? ORDER BY name",
        (namespace,),
    ):
        ids[int(eid)] = str(name)
        entities[str(name)] = Entity(str(name), mask_text(str(display)))
    if ids:
        for eid, rowid in conn.execute(
            "SELECT me.entity_id, me.memory_rowid FROM memory_entities me JOIN entities e "
            "ON e.id = me.entity_id WHERE e.namespace = ? ORDER BY me.memory_rowid",
            (namespace,),
        ):
            memory_id = by_rowid.get(int(rowid))
            if memory_id is not None and int(eid) in ids:
                entities[ids[int(eid)]].memories.append(memory_id)
    facts = [
        FactRow(str(s), str(p), str(o), mask_text(str(ot)), str(m), str(vf),
                None if vt is None else str(vt), None if by is None else str(by))
        for s, p, o, ot, m, vf, vt, by in conn.execute(
            "SELECT subject, predicate, object, object_text, memory_id, valid_from, valid_to, "
            "ended_by FROM facts WHERE namespace = ? ORDER BY subject, predicate, valid_from, id",
            (namespace,),
        )
        if str(m) in memories
    ]
    for fact in facts:  # "user", "we": subjects that need not be named entities
        entities.setdefault(fact.subject, Entity(fact.subject, mask_text(fact.subject)))
    edges = [
        (ids[int(a)], ids[int(b)], float(w))
        for a, b, w in conn.execute(
            "SELECT a, b, weight FROM entity_edges WHERE namespace = ? ORDER BY a, b, kind",
            (namespace,),
        )
        if int(a) in ids and int(b) in ids
    ]
    subjects = {f.subject for f in facts}
    shown = {key: e for key, e in entities.items()
             if e.memories or key in subjects}
    for key, entity in shown.items():
        entity.stem = page_stem(entity.display, key)
    return Snapshot(namespace, memories, shown, facts, edges)


def _day(value: object) -> str:
    if value is None:
        return "?"
    stamp = clock.parse_stored(value) if isinstance(value, str) else value
    return stamp.date().isoformat() if stamp is not None else "?"  # type: ignore[attr-defined]


def _quote(text: str) -> str:
    flat = re.sub(r"\s+", " ", text).strip()
    flat = flat if len(flat) <= QUOTE_CHARS else flat[: QUOTE_CHARS - 1] + "…"
    return _inert(flat)


def _inert(text: str) -> str:
    """Text of a memory is data, never a link: ``[[x]]`` and ``[a](b)`` are broken up."""
    return text.replace("[[", "[ [").replace("]]", "] ]").replace("](", "] (")


def _when(record: MemoryRecord) -> object:
    return record.valid_from or record.observed_at or record.created_at


def is_decision(record: MemoryRecord) -> bool:
    return any(tag.lower() in PINNED_TAGS for tag in record.tags)


def _decision_stem(record: MemoryRecord) -> str:
    words = " ".join(re.findall(r"\w+", record.content)[:6])
    return f"{_day(_when(record))}-{page_stem(words, record.id, always_hash=True)}"


def _front(kind: str, namespace: str, **extra: str) -> list[str]:
    lines = ["---", f"{MARKER}: {kind}", f"namespace: {namespace}"]
    lines += [f"{k}: {v}" for k, v in extra.items()]
    return [*lines, "---", ""]


def _link(path: str, label: str) -> str:
    return f"[[{path}|{label.replace('|', '/').replace(']', ')')}]]"


def _fact_line(fact: FactRow, value: str, current: bool) -> str:
    when = f"since {_day(fact.valid_from)}" if current else \
        f"{_day(fact.valid_from)} to {_day(fact.valid_to)}"
    line = f"- **{fact.predicate}**: {value} · {when} · memory `{fact.memory_id}`"
    return line + (f" · superseded by `{fact.ended_by}`" if fact.ended_by and not current else "")


def _memory_line(record: MemoryRecord, memories: dict[str, MemoryRecord]) -> str:
    if record.superseded_by:
        # A memory the general path linked stays valid (no valid_to): it held until the
        # memory that replaced it became valid.
        newer = memories.get(record.superseded_by)
        end = record.valid_to or (_when(newer) if newer is not None else None)
        when = f"{_day(_when(record))} to {_day(end)}"
        tail = f" · superseded by `{record.superseded_by}`"
    else:
        when, tail = _day(_when(record)), ""
    return f"- {when} · memory `{record.id}`{tail}: \"{_quote(record.content)}\""


def _memory_sections(
    records: list[MemoryRecord], memories: dict[str, MemoryRecord]
) -> list[str]:
    """Current memories, then superseded ones, newest first, at most ``MEMORIES_MAX`` each
    (an entity named in thousands of turns would otherwise make a page nobody reads)."""
    out: list[str] = []
    for heading, group in ((CURRENT_MEMORIES, [r for r in records if not r.superseded_by]),
                           (SUPERSEDED_MEMORIES, [r for r in records if r.superseded_by])):
        if group:
            out += ["", f"## {heading}", ""]
            group.sort(key=lambda r: (str(_when(r)), r.id), reverse=True)
            out += [_memory_line(r, memories) for r in group[:MEMORIES_MAX]]
            if len(group) > MEMORIES_MAX:
                out += ["", f"_{len(group) - MEMORIES_MAX} older ones not listed._"]
    return out


def _entity_page(snap: Snapshot, key: str, paths: dict[str, str]) -> tuple[list[str], list[str]]:
    """An entity's page (without its backlinks) and the pages it links to."""
    entity = snap.entities[key]
    mine = snap.facts_of.get(key, [])
    out = [*_front("entity", snap.namespace), f"# {entity.display}", ""]
    targets: list[str] = []

    def value(fact: FactRow) -> str:
        if fact.obj in paths and fact.obj != key:
            targets.append(paths[fact.obj])
            return _link(paths[fact.obj], fact.object_text)
        return _inert(fact.object_text)

    current = [f for f in mine if f.valid_to is None]
    closed = sorted((f for f in mine if f.valid_to is not None),
                    key=lambda f: (f.predicate, f.valid_to or "", f.memory_id), reverse=True)
    out += [f"## {CURRENT_FACTS}", ""]
    out += [_fact_line(f, value(f), True) for f in current] or ["- none"]
    if closed:
        out += ["", f"## {SUPERSEDED_FACTS}", ""]
        out += [_fact_line(f, value(f), False) for f in closed]
    out += _memory_sections([snap.memories[m] for m in dict.fromkeys(entity.memories)],
                            snap.memories)
    related = sorted(snap.edges_of.get(key, []), key=lambda item: (-item[0], item[1]))
    near = list(dict.fromkeys(o for _, o in related if o in paths and o != key))[:RELATED_MAX]
    if near:
        out += ["", "## Related", ""]
        out += [f"- {_link(paths[o], snap.entities[o].display)}" for o in near]
        targets += [paths[o] for o in near]
    return out, targets


def render(snap: Snapshot) -> dict[str, str]:
    """Every page of the export: relative path -> text."""
    paths = {key: f"entities/{e.stem}" for key, e in snap.entities.items()}
    decisions = sorted((r for r in snap.memories.values() if is_decision(r)),
                       key=lambda r: (_day(_when(r)), r.id))
    body: dict[str, list[str]] = {}
    links: dict[str, list[str]] = {}  # page -> pages it links to (before backlinks)
    for key in sorted(snap.entities, key=lambda k: paths[k]):
        body[paths[key]], links[paths[key]] = _entity_page(snap, key, paths)
    for record in decisions:
        path = f"decisions/{_decision_stem(record)}"
        mentioned = sorted(set(snap.entities_of.get(record.id, [])))
        title = _quote(record.content.split("\n", 1)[0])[:80]
        out = [*_front("decision", snap.namespace), f"# {title}", "",
               f"> {_quote(record.content)}", "",
               f"- {_day(_when(record))} · memory `{record.id}` · tags: "
               + ", ".join(sorted(record.tags))]
        if record.superseded_by:
            out.append(f"- superseded by `{record.superseded_by}` on {_day(record.valid_to)}")
        if mentioned:
            out += ["", "## Mentions", ""]
            out += [f"- {_link(paths[k], snap.entities[k].display)}" for k in mentioned]
        body[path] = out
        links[path] = [paths[k] for k in mentioned]
    back: dict[str, set[str]] = {p: set() for p in body}
    for source, targets in links.items():
        for target in targets:
            if target != source and target in back:
                back[target].add(source)
    pages: dict[str, str] = {}
    titles = {p: lines[lines.index("---", 1) + 2][2:] for p, lines in body.items()}
    for path, out in body.items():
        if path.startswith("entities/"):
            out = [*out, "", f"## {BACKLINKS}", ""]
            out += [f"- {_link(s, titles[s])}" for s in sorted(back[path])] or ["- none"]
        pages[f"{path}.md"] = "\n".join(out) + "\n"
    index = [*_front("index", snap.namespace), f"# Memory wiki: {snap.namespace}", "",
             "## Entities", ""]
    index += [f"- {_link(p, titles[p])}" for p in sorted(body) if p.startswith("entities/")] \
        or ["- none"]
    index += ["", "## Decisions and pinned memories", ""]
    index += [f"- {_link(p, titles[p])}" for p in sorted(body) if p.startswith("decisions/")] \
        or ["- none"]
    shown = {m for e in snap.entities.values() for m in e.memories}
    loose = [r for r in snap.memories.values()
             if r.id not in shown and r.kind != "turn" and not is_decision(r)]
    if loose:
        index += ["", "## Other memories", "", f"- {_link(UNFILED[:-3], 'Unfiled memories')}"]
        pages[UNFILED] = "\n".join(
            [*_front("unfiled", snap.namespace), "# Unfiled memories", "",
             "Notes that name no entity (conversation turns are left out)."]
            + _memory_sections(loose, snap.memories)) + "\n"
    pages["index.md"] = "\n".join(index) + "\n"
    return pages
