"""Which of a rule table's rules can match a text, from the literals each rule needs.

A rule listed in a ``NEEDS`` table runs only when one of its lower-cased literals occurs
in the text. Asking that rule by rule re-tests the same literals many times (a hundred
rules, each with its own ``any(...)``: most of the screen's cost on ordinary text).
The gate tests each distinct literal once and maps the ones present to their rules,
handing back the rules to run in the table's own order, so the findings and their order
are exactly those of the rule-by-rule check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Generic, TypeVar

__all__ = ["LiteralGate"]

Rule = TypeVar("Rule")


class LiteralGate(Generic[Rule]):
    """``gate.rules(lowered)``: the entries of ``table`` worth running on that text."""

    def __init__(self, table: Sequence[Rule], names: Sequence[str],
                 needs: Mapping[str, Sequence[str]]) -> None:
        self._table = tuple(table)
        self._always = frozenset(i for i, name in enumerate(names) if not needs.get(name))
        enables: dict[str, set[int]] = {}
        for i, name in enumerate(names):
            for literal in needs.get(name) or ():
                enables.setdefault(literal, set()).add(i)
        self._enables = tuple((literal, frozenset(rules)) for literal, rules in
                              sorted(enables.items()))

    def rules(self, lowered: str) -> list[Rule]:
        """The table's rules that may match ``lowered`` (the text, lower-cased), in order."""
        picked = set(self._always)
        for literal, rules in self._enables:
            if literal in lowered:
                picked |= rules
        return [self._table[i] for i in sorted(picked)]
