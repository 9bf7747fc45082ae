"""What a memory is about and what it states, for the general supersession path.

A memory's *signature* splits its words into the **values** it states (names, numbers,
versions, times, handles: what changes when something is updated) and the **aspect**
words left when those are masked (what the statement is about: "host", "search", "api").
Two memories about the same subject and aspect that state different values are
candidates for an update; a **change cue** in the newer one ("moved", "now", "no longer",
"from X to Y") makes it likelier. Nothing here knows a predicate or a phrase pattern:
the cue words are the only list, and they raise confidence without being required.
What a change is not: a *series* (each memory carries an item label the other lacks:
"Build 1234 failed" / "Build 1235 failed"), or one more item ("we also use Redis").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from ..core.kinds import stem
from ..core.text import STOP_WORDS, tokens
from .entities import Mention
from .scope import ADDS, CONTINUES, EXTENDS, Marked, main_clause, marked, reaches

__all__ = ["STRONG_CUES", "Signature", "bounded_signature", "pair_features", "signature", "stem"]

# Words that state a change. Strong ones say so outright; weak ones ("now", "these days")
# mostly mark the present, which a stale statement was not.
_STRONG = frozenset(
    [
        "moved", "move", "moving", "switched", "switch", "switching", "migrated", "migrate",
        "migrating", "upgraded", "upgrade", "bumped", "replaced", "replace", "replacing",
        "swapped", "swap", "instead", "stepped", "quit", "left", "joined", "relocated",
        "transferred", "renamed", "rewritten", "rewrote", "changed", "change", "dropped",
        "cancelled", "canceled", "stopped", "retired", "became", "become", "promoted",
        "handed", "passed", "anymore", "longer", "gave", "raised", "lowered", "extended",
        "pushed", "shifted", "converted", "finally", "sold", "ditched", "abandoned",
        # ending, hand-over and transition verbs of the same kind (the third round added
        # them by kind, not from the sets' misses alone)
        "gone", "ended", "scrapped", "phased", "decommissioned", "discontinued",
        "deprecated", "sunset", "reassigned", "transitioned", "graduated", "traded",
        "resigned", "demoted", "downgraded", "reverted", "moves", "switches", "replaces",
        "updated",
    ]
)
_WEAK = frozenset(
    [
        "now", "new", "newly", "started", "starts", "start", "since", "days", "currently",
        "today", "nowadays", "latest", "rather", "after", "got", "hired", "accepted"
    ]
)
CUES = _STRONG | _WEAK
STRONG_CUES = _STRONG
# Phrases whose words alone would be stop words or too common.
_PHRASES = re.compile(
    r"\bno longer\b|\bnot any ?more\b|\bthese days\b|\bfrom now on\b|\bover to\b|"
    r"\btook over\b|\bstepped (?:down|back)\b|\binstead of\b|\brather than\b|"
    r"\bfrom \S+(?: \S+)? to\b|\bnot\b|\bn't\b",
    re.I,
)
# Numbers, versions, times, dates and handles, kept whole ("1.20", "9:30", "@lmartin").
_NUMBER = re.compile(r"(?<![\w.])(?:\d[\w.:/,-]*\w|\d|@[\w.]+\w|[\w.+-]+@[\w.-]+\w)")
# A date as written ("2026-11-03", "2026-04"): labels an event, it is not a setting.
_DATE = re.compile(r"^\d{4}-\d{2}(?:-\d{2})?$")
# What can label an item: the numbers above, and paths ("endpoint /users").
_LABELLED = re.compile(_NUMBER.pattern + r"|(?<!\S)/[\w./-]*\w")
_MONTH = (r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*")
_MONTH_AFTER = re.compile(r"^\s+" + _MONTH + r"\b", re.I)
_MONTH_BEFORE = re.compile(r"\b" + _MONTH + r"\s+$", re.I)
_BEFORE = re.compile(r"([^\W\d_][\w'’]*)\s+$")
_VOCATIVE = re.compile(
    r"(?:^|(?<=[,!.?]\s)|\b(?i:hey|hi|hello|thanks|thank you|wow|congrats|sorry|dear|yes|"
    r"oh|ok|okay|great|cool|awesome|nice|morning|evening|woohoo)\s*,?\s*)"
    r"([A-Z][\w'’-]+)(?=\s*[!,.?])(?!,\s*(?:who|which|whose|whom|where)\b)",
)
# "a new X", "got new X": the word called new.
_INTRODUCED = re.compile(r"\bnew(?:ly)?\s+([^\W\d_][\w'’-]*)", re.I)
_ACQUIRE = frozenset(["new", "newly", "got"])
_LEAD = re.compile(_NUMBER.pattern + r"|[^\W\d_][\w'’-]*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_DIGIT = re.compile(r"\d")
@dataclass(frozen=True)
class Signature:
    """The parts of one memory the general path compares."""

    names: frozenset[str]  # entity keys (the subject or the values)
    name_words: frozenset[str]  # stems of the words of those names
    values: frozenset[str]  # stems that state a value: name words, numbers, handles
    aspect: frozenset[str]  # content stems with values and cue words masked
    cue: float  # 1.0 a strong change cue, 0.5 a weak one, 0.0 none
    cues: frozenset[str]  # the change words and phrases it says
    subject: str | None  # "we", or the speaker/"user" for first-person text
    head: frozenset[str]  # the first content words: where a sentence names its topic
    # Where it says it adds to what was ("also", "as well", "too"), says so unambiguously
    # ("also", "another", a clause-closing "too"), or says a value holds on ("still",
    # "as before"): the clauses each marker sits in (scope.py), None when not said.
    adds: Marked | None
    extends: Marked | None
    continues: Marked | None
    text: str  # the statements compared (questions and names said to someone left out)

    # Read only when a pair is compared, which most memories never are: computed then.
    @cached_property
    def lead(self) -> frozenset[str]:
        """Values among the first content tokens: who or what it is about."""
        return frozenset(_lead(_main(self.text), self.values))

    @cached_property
    def introduced(self) -> frozenset[str]:
        """What it calls new ("got a new boiler", "to a new bucket"): the word after."""
        return frozenset(stem(m.group(1).casefold()) for m in _INTRODUCED.finditer(self.text))

    @cached_property
    def _labelled(self) -> tuple[frozenset[str], frozenset[str]]:
        return _labels(self.text, self.names)

    @property
    def labels(self) -> frozenset[str]:
        """Numbers that name an item ("build 1234", "PR #45", dates)."""
        return self._labelled[0]

    @property
    def dates(self) -> frozenset[str]:
        """The labels that are dates, which can also be rescheduled."""
        return self._labelled[1]

    def size(self) -> int:
        """Distinct content words and values: how much the text states."""
        return len(self.aspect | self.values)

    def terms(self) -> list[str]:
        """Index terms: what another memory about the same thing would share."""
        return sorted(self.aspect | self.name_words)[:16]


def signature(text: str, mentions: list[Mention], *, speaker: str | None) -> Signature:
    found = bounded_signature(text, mentions, speaker=speaker, limit=None)
    assert found is not None  # no limit: always a signature
    return found


def bounded_signature(
    text: str, mentions: list[Mention], *, speaker: str | None, limit: int | None
) -> Signature | None:
    """The signature, or None when it would hold more than ``limit`` words and values.

    A text over the limit whose sentence opens ahead of its main clause or carries an
    aside ("Because the Mac mini kept falling asleep during releases, mobile builds are
    signed in Codemagic now") is read as that main clause, if it fits.
    """
    found = _bounded(text, mentions, speaker=speaker, limit=limit)
    if found is not None or limit is None or "," not in text:
        return found
    main = _main(text)
    if main == text:
        return None
    folded = main.casefold()
    kept = [m for m in mentions if m.text.casefold() in folded]
    return _bounded(main, kept, speaker=speaker, limit=limit)


def _bounded(
    text: str, mentions: list[Mention], *, speaker: str | None, limit: int | None
) -> Signature | None:
    """The signature of ``text`` as a whole, or None when over ``limit``.

    Its distinct content stems are a lower bound of its size, known before the names,
    values and cues are read: most long texts stop there, for little work.
    """
    # A name said to someone ("Thanks, Maria!") is who a turn speaks to, not its subject.
    addressed = {m.group(1).casefold() for m in _VOCATIVE.finditer(text)}
    if addressed:
        mentions = [m for m in mentions if m.key not in addressed]
        text = _VOCATIVE.sub(" ", text)
    # Questions state nothing ("Are you still at Acme?"): only statements are compared.
    if "?" in text:
        text = " ".join(
            part for part in _SENTENCE.split(text) if not part.rstrip().endswith("?"))
    every = tokens(text)
    words = [w for w in every if not _DIGIT.search(w)] if _DIGIT.search(text) else every
    stems = [stem(w) for w in words if w not in STOP_WORDS and w not in CUES and len(w) > 2]
    if limit is not None and len(set(stems)) > limit:
        return None  # size() covers every stem: it is over the limit already
    names = frozenset(m.key for m in mentions) | _capitalised(text)
    name_words = frozenset(
        stem(w) for key in names for w in tokens(key)
        if w not in CUES and (w not in STOP_WORDS or key == w)
    )
    numbers = {m.group(0).casefold().rstrip(".,") for m in _NUMBER.finditer(text)}
    values = set(name_words) | numbers
    aspect = frozenset(s for s in stems if s not in values)
    cue = 0.0
    phrases = [m.group(0).casefold() for m in _PHRASES.finditer(text)]
    cues = frozenset(phrases + [w for w in words if w in CUES])
    if phrases or any(w in _STRONG for w in words):
        cue = 1.0
    elif any(w in _WEAK for w in words):
        cue = 0.5
    lowered = set(every)
    subject: str | None = None
    if lowered & {"i", "my", "me", "i'm", "im"}:
        subject = (speaker or "user").casefold()
    elif lowered & {"we", "our", "us"}:
        subject = "we"
    head = frozenset(_head(text, stems))
    found = Signature(
        names, name_words, frozenset(values), aspect, cue, cues, subject, head,
        marked(text, ADDS, stem=stem, has_cue=_has_cue),
        marked(text, EXTENDS, stem=stem, has_cue=_has_cue),
        marked(text, CONTINUES, stem=stem, has_cue=_has_cue), text,
    )
    return None if limit is not None and found.size() > limit else found


def _has_cue(clause: str) -> bool:
    return bool(_PHRASES.search(clause)) or any(w in CUES for w in tokens(clause))


def _content(text: str) -> list[str]:
    return [stem(w) for w in tokens(text)
            if w not in STOP_WORDS and w not in CUES and len(w) > 2 and not _DIGIT.search(w)]


def _head(text: str, stems: list[str]) -> list[str]:
    """The first two content stems of the main clause: where a sentence names its topic.

    What opens the sentence ahead of it ("Since Dr Patel retired, Grandpa Joe sees Dr
    Okafor", "After two outages, a post-mortem and a budget fight, the invoices ...") and
    inserted asides ("Mariusz, who has a bad knee, now coaches ...") are skipped.
    """
    main = _main(text)
    if main != text:
        rest = _content(main)
        if rest:
            return rest[:2]
    return stems[:2]


def _main(text: str) -> str:
    return main_clause(text, lambda part: len(_content(part)))


def _labels(text: str, names: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    """Numbers that identify one item of a series rather than state a setting.

    "Build 1234", "PR #45", "INC-2231", "note number 3", "endpoint /users", "standup
    2026-11-03": a number or path after a common noun, "#" or a hyphen, and dates. Not
    labels: a number after a name ("Python 3.9", "iOS 15": the version of a named thing,
    which has one at a time), after a function word ("is 30 minutes", "at 9:30", "ends
    in 4471") or opening a clause ("3 failures"): those state a value that can change.
    """
    out: set[str] = set()
    dates: set[str] = set()
    for match in _LABELLED.finditer(text):
        value = match.group(0).casefold().rstrip(".,")
        before = text[: match.start()]
        if _DATE.match(value) or _MONTH_AFTER.match(text[match.end():]) or (
            _MONTH_BEFORE.search(before)
        ):
            dates.add(value)
            continue
        if before.endswith("#") or (before.endswith("-") and before[-2:-1].isalpha()):
            out.add(value)
            continue
        word = _BEFORE.search(before)
        if word is None:
            continue
        key = word.group(1).casefold()
        named = key in names and not word.group(1).isupper()
        if not named and key not in STOP_WORDS and key not in CUES:
            out.add(value)
    return frozenset(out | dates), frozenset(dates)


def _lead(text: str, values: frozenset[str]) -> list[str]:
    """The values among the first two content tokens, in text order (numbers too)."""
    out: list[str] = []
    seen = 0
    for match in _LEAD.finditer(text):
        token = match.group(0).casefold().rstrip(".,")
        coded = any(c.isdigit() for c in token)  # "xj-4471", "1.20": a value as written
        key = token if coded or token in values else stem(token)
        value = coded or key in values
        if key in STOP_WORDS or key in CUES or (len(key) < 3 and not value):
            continue
        seen += 1
        if value:
            out.append(key)
        if seen == 2:
            break
    return out


def _capitalised(text: str) -> frozenset[str]:
    """Capitalised words not opening a sentence, and inner-capital words anywhere
    ("CircleCI", "iFood"): names the rules' entity finder may have passed over."""
    out: set[str] = set()
    for match in _WORD.finditer(text):
        word = match.group(0)
        if word.islower():
            continue
        at = match.start() - 1
        while at >= 0 and text[at].isspace():
            at -= 1
        opens = at < 0 or text[at] in ".!?;:\"(“"
        inner = any(c.isupper() for c in word[1:])
        if (word[0].isupper() and not opens) or inner:
            key = word.casefold()
            # A capitalised stop word inside a sentence is a name ("written in Go").
            if key not in CUES and not key.startswith("i'") and key != "i":
                out.add(key)
    return frozenset(out)


@dataclass(frozen=True)
class Features:
    """How an older and a newer memory relate (each 0..1)."""

    subject: float  # a shared name, or the same first-person/team subject
    aspect: float  # overlap of the masked content words
    differs: float  # each states a value the other does not
    names_old: float  # the newer names a value of the older (“from X”, “left X”)
    cue: float
    adds: float  # the newer says it adds ("also", "too", "as well"), not replaces
    rivals: float  # each opens with a value the other lacks: two subjects
    series: float  # each carries an item label the other lacks: two members of a series
    extends: float  # the newer says it adds one more ("we also use Redis", "another customer")
    continues: float  # the newer says the old value holds on ("Wren still lives in Cardiff")
    dense: float | None  # cosine of the two rows' vectors, when both have one


def pair_features(old: Signature, new: Signature, dense: float | None) -> Features:
    old_all, new_all = old.aspect | old.values, new.aspect | new.values
    shared = old_all & new_all
    shared_names = shared & (old.values | new.values)
    # One side opens with a name the other never says ("Ravi signed up for the marathon
    # in Berlin" / "The Berlin office closes at 7pm"): a name shared elsewhere, or a
    # common word both open with ("jobs"), is then no sign of one subject.
    foreign = bool(new.lead - old_all or old.lead - new_all)
    if shared_names & (old.head & new.head if foreign else old.head | new.head):
        subject = 1.0  # a shared name where a sentence names its topic
    elif old.head & new.head and not foreign:
        subject = 0.75
    elif shared_names:
        subject = 0.6  # a shared name elsewhere: the subject, or the old value
    elif old.subject and old.subject == new.subject:
        subject = 0.5
    else:
        subject = 0.0
    # The overlap of words that are values on neither side. Refinements measured and
    # not kept (docs/facts.md): leaving out the words both open with (the subject), and
    # counting a word the rules named on one side only; both cut false links on the
    # tuning sets and lost real changes on held-out text.
    plain_old, plain_new = old_all - old.values, new_all - new.values
    small = min(len(plain_old), len(plain_new))
    aspect = len(shared - old.values - new.values) / small if small else 0.0
    # A value counts as changed only if the other memory does not mention it at all
    # (a name written lowercase on one side is still the same name).
    old_only = old.values - new_all
    new_only = new.values - old_all
    if new_only and old_only:
        differs = 1.0
    elif new_only:
        differs = 0.75  # "from X to Y" names the old value too
    elif old_only or (plain_old - shared and plain_new - shared):
        differs = 0.5  # a lowercase value ("dark mode" -> "light mode")
    else:
        differs = 0.0
    # The newer names an old value ("from CircleCI", "left Maersk"): a shared name that
    # is not where both sentences name their topic (that one is the subject).
    # The older's own topic is not its value when the newer is about another subject.
    named = shared & old.values - (old.head & new.head) - (old.lead if foreign else set())
    names_old = 1.0 if new.cue and new_only and named and not new.cues <= old.cues else 0.0
    # Different values where both sentences name their topic ("Error XJ-4471 means ...",
    # "Error QP-9902 means ..."): two things described alike, not one thing changed.
    rivals = 1.0 if (old.lead - new_all) and (new.lead - old_all) else 0.0
    # "Build 1234 failed" / "Build 1235 failed": a different label in the same frame is the
    # next item of a series, not the first one changed, unless the newer names the older
    # label as what it replaces ("moved from 1234 to 1235"). A change word alone does not
    # count: series members say "passed", "left", "moved" of themselves.
    # A change word both say belongs to their shared frame ("Build 88 passed" / "Build 89
    # passed"), so it is no evidence that the newer changed anything.
    cue = 0.0 if new.cues and new.cues <= old.cues else new.cue
    if cue == 0.5 and new.introduced and not new.introduced & old_all:
        # "got a new boiler", "uses the new bank template": "new" calls another thing
        # new, not the older's value changed; only the other weak cues still count.
        cue = 0.5 if new.cues - _ACQUIRE - old.cues else 0.0
    new_labels = new.labels - old_all
    series = 1.0 if (old.labels - new_all) and new_labels and not names_old else 0.0
    if series and cue >= 1.0 and new_labels <= new.dates:
        series = 0.0  # a date can be moved ("the launch got pushed to 3 October")
    # A marker speaks about the older when its clause is the whole statement or restates
    # the older ("Cormac still cycles everywhere, but he left Guinness" keeps the
    # cycling, not the job).
    adds = 1.0 if reaches(new.adds, old_all) else 0.0
    extends = reaches(new.extends, old_all) and not names_old
    continues = reaches(new.continues, old_all) and not names_old
    return Features(subject, aspect, differs, names_old, cue, adds, rivals, series,
                    1.0 if extends else 0.0, 1.0 if continues else 0.0, dense)
