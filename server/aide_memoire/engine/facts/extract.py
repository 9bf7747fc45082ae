"""Rules that read (subject, predicate, object) facts out of a memory's text.

No model: compiled regular expressions over clauses, for the common ways people state a
job, a home, a role, a version, a status, a preference, a liking, a switch. A clause that
is a question, a wish or a plan ("I might move to Berlin") states no fact; a negated one
("I no longer work at Acme") retracts one. "I" is the turn's speaker (or "user" for a
note); "we", "our team" and "the project" are "we".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Literal

from .entities import Mention, find_names, normalise
from .taxonomy import category_of

__all__ = ["Extraction", "FactDraft", "extract"]

Action = Literal["assert", "retract", "replace"]

# Preference categories: a switch among these is a change of preference, not of tool.
_PREFERENCE = frozenset({"theme", "indentation", "drink"})


@dataclass(frozen=True)
class FactDraft:
    subject: str
    subject_text: str
    predicate: str
    object: str
    object_text: str
    action: Action = "assert"
    replaces: str | None = None  # the object a "replace" closes (normalised)
    shift_days: float = 0.0  # "last month": the fact began this many days before


@dataclass
class Extraction:
    entities: list[Mention] = field(default_factory=list)
    facts: list[FactDraft] = field(default_factory=list)


_ADV = (
    r"(?:\s+(?:just|recently|finally|now|also|actually|officially|already|eventually|"
    r"have|has|had|'ve|’ve|'d|’d|got|been|then|since|ultimately|happily|proudly|is|am|are|"
    r"was|really|currently|still|"
    r"no longer|not|never|don't|don’t|doesn't|doesn’t|didn't|didn’t|do not|does not))*"
)
_SUBJ = (
    r"(?P<s>I|[Ww]e|[Oo]ur (?:team|project|company|app|startup)|"
    r"[Tt]he (?:team|project|user|company|app)|[Uu]ser|"
    r"[A-Z][\w'’-]+(?:\s[A-Z][\w'’-]+)?)"
)
_START = r"(?:^|(?<=[\s,;:(\"“]))"
_POSS = r"(?P<s>[Mm]y|[Oo]ur|[A-Z][\w-]+(?:\s[A-Z][\w-]+)?(?=['’]s))(?:['’]s)?"
_OBJ = r"(?P<o>[\w&'’.+#-]+(?:\s+[\w&'’.+#-]+){0,4})"
_OLD = r"(?P<old>[\w&'’.+#-]+(?:\s+[\w&'’.+#-]+){0,3}?)"
_CAP_OBJ = r"(?:the\s+)?(?P<o>[A-Z][\w&'’.-]*(?:\s+(?:of\s+|de\s+)?[A-Z][\w&'’.-]*){0,3})"
_VER = r"(?:v|version\s*)?(?P<o>\d+(?:\.\d+){0,3}(?:[a-z]+\d*)?)\b"
_PKG = r"(?P<s>[A-Za-z][\w.+-]*)"

_STATUS_WORDS = (
    "done|finished|complete|completed|blocked|paused|on hold|cancelled|canceled|shipped|"
    "launched|released|in progress|deprecated|archived|live|in review|abandoned|delayed|"
    "approved|stalled|merged|deployed|frozen|active|inactive|wrapped up"
)
_ROLE_NOUNS = (
    "engineer|developer|manager|designer|director|lead|scientist|analyst|architect|"
    "teacher|doctor|nurse|student|counselor|counsellor|consultant|researcher|intern|"
    "officer|president|founder|cto|ceo|cfo|vp|head of [a-z]+|writer|editor|artist|"
    "accountant|lawyer|professor|chef|administrator|admin|maintainer|owner|coordinator|"
    "specialist|technician|therapist|instructor|assistant|pm|sre|devops|midwife|pharmacist|"
    "dentist|pilot|firefighter|mechanic|electrician|plumber|cashier|barista|photographer|"
    "musician|paramedic|surgeon|veterinarian|vet|librarian|journalist|principal|tutor"
)


@dataclass(frozen=True)
class Rule:
    pattern: re.Pattern[str]
    predicate: str  # "works_at"...; "*switch" decides from the object's category
    action: Action = "assert"
    object_kind: Literal["phrase", "name", "version", "role", "status"] = "phrase"
    gate: frozenset[str] = frozenset()  # words one of which must be in the clause


def _rule(regex: str, predicate: str, action: Action = "assert", kind: str = "phrase") -> Rule:
    return Rule(re.compile(regex), predicate, action, kind)  # type: ignore[arg-type]


_RULES: tuple[Rule, ...] = (
    # works_at
    _rule(_START + _SUBJ + _ADV + r"\s+(?:left|quit)\s+" + _OLD
          + r"\s+(?:and|to)\s+(?:joined|join|started at|went to|moved to)\s+" + _CAP_OBJ,
          "works_at", "replace", "name"),
    _rule(_START + _SUBJ + _ADV + r"\s+(?:left|quit|leaves|resigned from)\s+" + _CAP_OBJ,
          "works_at", "retract", "name"),
    _rule(_START + _SUBJ + _ADV + r"\s+(?:am|is|are|was|'m|’m)?\s*(?:work|works|worked|"
          r"working|started working|been working|employed|hired)\s+(?:at|for|by)\s+" + _CAP_OBJ,
          "works_at", kind="name"),
    _rule(_START + _SUBJ + _ADV + r"\s+(?:joined|joins|started at|started a (?:new )?job at|"
          r"got a job at|took a job at|accepted a job at|got hired at|signed with)\s+"
          + _CAP_OBJ, "works_at", kind="name"),
    _rule(_START + _POSS + r"\s+(?:new\s+)?(?:employer|company)\s+is\s+(?:now\s+)?"
          + _CAP_OBJ, "works_at", kind="name"),
    # lives_in
    _rule(_START + _SUBJ + _ADV + r"\s+(?:am|is|are|'m|’m)?\s*(?:live|lives|lived|living|"
          r"reside|resides|based|settled|staying)\s+in\s+" + _CAP_OBJ, "lives_in", kind="name"),
    _rule(_START + _SUBJ + _ADV + r"\s+(?:am|is|are|'m|’m)?\s*(?:moved|move|moving|relocated|"
          r"relocating|moved back|moved house)\s+(?:over\s+)?to\s+" + _CAP_OBJ,
          "*move", kind="name"),
    _rule(_START + _POSS + r"\s+(?:home|hometown|city|home town)\s+is\s+(?:now\s+)?"
          + _CAP_OBJ, "lives_in", kind="name"),
    # role
    _rule(_START + _SUBJ + _ADV + r"\s+(?:am|is|are|'m|’m)?\s*(?:work|works|worked|working|"
          r"started working|employed)\s+as\s+(?:a|an|the|our)\s+" + _OBJ, "role", kind="role"),
    _rule(_START + _SUBJ + _ADV + r"\s+(?:was|got|been|is|am|are|'m|’m)?\s*promoted\s+to\s+"
          r"(?:a\s+|an\s+|the\s+)?" + _OBJ, "role", kind="role"),
    _rule(_START + _POSS + r"\s+(?:new\s+)?(?:role|title|job title|position|job)\s+is\s+"
          r"(?:now\s+)?(?:a\s+|an\s+|the\s+)?" + _OBJ, "role", kind="role"),
    _rule(_START + _SUBJ + _ADV + r"(?:\s+(?:am|is|are|became|becomes|become)|['’]m|['’]s)"
          r"\s+(?:now\s+)?(?:the|our|a|an)\s+(?P<o>(?:[\w-]+\s+){0,2}(?:" + _ROLE_NOUNS + r"))\b",
          "role", kind="role"),
    _rule(_START + _SUBJ + _ADV + r"\s+(?:am|is|are|'m|’m|became|becomes|become|was hired as|"
          r"joined as|works as|work as)\s+(?:now\s+)?(?:the|our|a|an)\s+(?:[\w-]+\s+){0,3}?(?:"
          + _ROLE_NOUNS + r")\s+(?:at|for|with|of)\s+" + _CAP_OBJ, "works_at", kind="name"),
    # uses_version (subject: the component)
    _rule(r"(?i:upgraded|updated|bumped|moved|downgraded|pinned|migrated|upgrade|update|bump)"
          r"\s+" + _PKG + r"\s+(?:from\s+(?:v|version\s*)?(?P<old>\d[\w.]*)\s+)?to\s+" + _VER,
          "uses_version", kind="version"),
    _rule(r"(?<![\w.])" + _PKG + r"\s+(?:is|was|has been)\s+(?:now\s+)?(?:at|on|pinned to|"
          r"upgraded to|bumped to|updated to)\s+" + _VER, "uses_version", kind="version"),
    _rule(r"(?i:using|use|uses|on|run|runs|running|installed|requires|require|pin|pinned)\s+"
          + _PKG + r"\s+" + _VER, "uses_version", kind="version"),
    # status (subject: a project or task; pronoun subjects are left out)
    _rule(r"(?:^|(?<=[\s,;:]))(?:[Tt]he\s+|[Oo]ur\s+)?(?P<s>[A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*)"
          r"{0,2})\s+(?:is|was|has been|got|'s|’s)\s+(?:now\s+)?(?:officially\s+)?"
          r"(?P<o>" + _STATUS_WORDS + r")\b", "status", kind="status"),
    _rule(r"marked\s+(?:the\s+)?(?P<s>[A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*){0,2})\s+as\s+"
          r"(?P<o>" + _STATUS_WORDS + r")\b", "status", kind="status"),
    # switches: tool or preference, decided by the object's category
    _rule(_START + _SUBJ + _ADV + r"\s+(?:switched|switch|migrated|migrate|moved|changed|went"
          r"|converted|transitioned)\s+(?:over\s+)?from\s+" + _OLD + r"\s+to\s+" + _OBJ,
          "*switch", "replace"),
    _rule(_START + _SUBJ + _ADV + r"\s+(?:replaced|swapped|substituted)\s+" + _OLD
          + r"\s+(?:with|for|by)\s+" + _OBJ, "*switch", "replace"),
    _rule(_START + _SUBJ + _ADV + r"\s+(?:switched|switch|migrated|migrate|changed|"
          r"converted|transitioned)\s+(?:over\s+)?to\s+" + _OBJ, "*switch", "replace"),
    _rule(_START + _SUBJ + _ADV + r"\s+(?:prefer|prefers|preferred|went with|chose|picked|"
          r"settled on|go with)\s+" + _OBJ, "*prefer"),
    _rule(_START + _POSS + r"\s+(?:favorite|favourite|preferred)\s+(?P<cat>[a-z]+"
          r"(?:\s[a-z]+)?)\s+is\s+(?:now\s+)?" + _OBJ, "prefers"),
    # multi-valued
    _rule(_START + _SUBJ + _ADV + r"\s+(?:stopped|quit|gave up|dropped|ditched|abandoned)\s+"
          r"(?:using\s+|relying on\s+)?" + _OBJ, "uses", "retract"),
    _rule(_START + _SUBJ + _ADV + r"\s+(?:am|is|are|'m|’m)?\s*(?:use|uses|using|rely on|"
          r"relies on|run on|runs on|deploy to|deploys to|deploy on|deploys on|deploy with|"
          r"deploys with|host on|hosts on|write in|code in|store data in|stores data in)\s+"
          + _OBJ, "uses"),
    _rule(_START + _SUBJ + _ADV + r"\s+(?:am|is|are|'m|’m)?\s*(?:like|likes|love|loves|enjoy|"
          r"enjoys|adore|adores|into|a fan of|a big fan of|passionate about)\s+" + _OBJ,
          "likes"),
    _rule(_START + _SUBJ + _ADV + r"\s+(?:can't stand|can’t stand|hate|hates|dislike|"
          r"dislikes|stopped liking|stopped enjoying|got tired of|am tired of|'m tired of)\s+"
          + _OBJ, "likes", "retract"),
    _rule(_START + _SUBJ + _ADV + r"\s+(?:have|has|own|owns|bought|adopted|got)\s+"
          r"(?:a|an|two|three|four|\d+|new|my)\s+" + _OBJ, "has"),
    _rule(_START + _SUBJ + _ADV + r"\s+(?:visited|went to|traveled to|travelled to|been to|"
          r"flew to|toured|took a trip to)\s+" + _CAP_OBJ, "visited", kind="name"),
)

# One cheap gate a rule (in _RULES order): words one of which the clause must hold before
# the rule's pattern runs. Most clauses state no fact and skip every rule after one set
# intersection each (extraction must cost well under 1 ms a turn). "#d": any digit.
def _words(alternation: str) -> str:
    return " ".join(part.split()[0] for part in alternation.split("|") if part.strip())


_GATES = (
    "left quit", "left quit leaves resigned", "work works worked working employed hired",
    "joined joins started got took accepted hired signed", "employer company",
    "live lives lived living reside resides based settled staying",
    "moved move moving relocated relocating", "home hometown city",
    "work works worked working employed", "promoted",
    "role title position job", _words(_ROLE_NOUNS), _words(_ROLE_NOUNS), "#d", "#d", "#d",
    _words(_STATUS_WORDS), "marked", "from", "replaced swapped substituted",
    "switched switch migrated migrate moved changed went converted transitioned",
    "prefer prefers preferred went chose picked settled go", "favorite favourite preferred",
    "stopped quit gave dropped ditched abandoned",
    "use uses using rely relies run runs deploy deploys host hosts write code store stores",
    "like likes love loves enjoy enjoys adore adores into fan passionate",
    "can't can’t hate hates dislike dislikes stopped tired",
    "have has own owns bought adopted got", "visited went traveled travelled been flew "
    "toured took",
)
_RULES = tuple(
    replace(rule, gate=frozenset(gate.split()))
    for rule, gate in zip(_RULES, _GATES, strict=True)
)
_GATE_WORDS = re.compile(r"[a-z]+(?:['’][a-z]+)?")


_NEGATION = re.compile(r"\b(?:not|never|no longer|n't|n’t|nor)\b", re.IGNORECASE)
# A wish, plan, doubt or condition states no fact yet.
_HEDGE = re.compile(
    r"\b(?:might|may|could|would|should|will|'ll|’ll|plan|plans|planning|want|wants|wanted|"
    r"hope|hoping|thinking|considering|consider|if|maybe|perhaps|going to|gonna|wish|"
    r"unless|whether|dream|dreams|someday|soon)\b",
    re.IGNORECASE,
)
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")
_CLAUSES = re.compile(r",?\s+(?:and then|and|but|then|so|while)\s+(?=[a-z])")
_LEADING_SUBJ = re.compile(r"^" + _SUBJ + r"\b")
_CUT_WORDS = frozenset(
    [
        "and", "but", "or", "because", "since", "last", "this", "next", "yesterday", "today",
        "tomorrow", "in", "at", "on", "for", "from", "over", "to", "with", "after", "before",
        "when", "while", "so", "which", "who", "that", "as", "by", "until", "now", "again", "too",
        "anymore", "any", "more", "instead", "recently", "lately", "ago", "a", "an", "the", "my",
        "our", "your", "their", "his", "her", "its"
    ]
)
_VERSION_WORD = re.compile(r"v?\d+(?:\.\d+)*")
_KEEP_FIRST = frozenset({"a", "an", "the", "my", "our"})
_AGO = re.compile(
    r"\b(?:(?P<n>\d+|a|an|one|two|three|four|five|six)\s+(?P<u>day|week|month|year)s?\s+ago|"
    r"last\s+(?P<lu>week|month|year)|(?P<y>yesterday))\b",
    re.IGNORECASE,
)
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_UNIT_DAYS = {"day": 1.0, "week": 7.0, "month": 30.0, "year": 365.0}
_PRONOUN_SUBJECTS = frozenset({"he", "she", "they", "it", "this", "that", "there", "you"})
_NOT_OBJECTS = frozenset(
    [
        "it", "this", "that", "them", "him", "her", "you", "me", "us", "everything", "something",
        "anything", "nothing", "all", "one", "ones", "lot", "lots", "stuff", "things", "thing"
    ]
)
_NOT_STATUS_SUBJECTS = frozenset({"i", "we", "you", "everything", "all", "that", "this"})
_WE = frozenset(
    {"we", "our team", "our project", "our company", "our app", "our startup", "the team",
     "the project", "the company", "the app"}
)


def _shift(clause: str) -> float:
    match = _AGO.search(clause)
    if match is None:
        return 0.0
    if match.group("y"):
        return 1.0
    if match.group("lu"):
        return _UNIT_DAYS[match.group("lu").lower()]
    count = match.group("n").lower()
    number = int(count) if count.isdigit() else _NUMBERS.get(count, 1)
    return number * _UNIT_DAYS[match.group("u").lower()]


def _phrase(raw: str, kind: str) -> str:
    """Trim a captured object at the first word that ends a noun phrase."""
    words = raw.replace("’", "'").split()
    kept: list[str] = []
    for index, word in enumerate(words):
        bare = word.strip(".,;:!?\"'()").lower()
        if bare in _CUT_WORDS and not (index == 0 and bare in _KEEP_FIRST and kind != "name"):
            break
        kept.append(word)
        if word.endswith((",", ".", ";", ":", "!", "?")) and not re.search(r"\d\.\d", word):
            break
    if kind != "version":
        # "Python 3.11" as a tool is Python; its version is a uses_version fact.
        while len(kept) > 1 and _VERSION_WORD.fullmatch(kept[-1].strip(".,;:!?")):
            kept.pop()
    text = " ".join(kept).strip(".,;:!?\"'() ")
    if kind == "role":
        text = re.sub(r"^(?:a|an|the|our)\s+", "", text, flags=re.IGNORECASE)
    return text


_CONTRACTION = re.compile(r"['’](?:ve|m|d|ll|s|re)$")
_SUBJECT_TYPE = {"status": "project", "uses_version": "component"}
_OBJECT_TYPE = {"works_at": "organization", "lives_in": "place", "visited": "place",
                "uses": "tech", "role": "role"}


def _subject(raw: str, speaker: str | None) -> tuple[str, str] | None:
    key = _CONTRACTION.sub("", normalise(raw))
    if key in ("i", "user", "the user", "my"):
        return (normalise(speaker), speaker) if speaker else ("user", "user")
    if key in _WE or key == "our":
        return "we", raw
    if key in _PRONOUN_SUBJECTS or not key:
        return None
    return key, raw


def _clauses(sentence: str) -> list[str]:
    parts = _CLAUSES.split(sentence)
    lead = _LEADING_SUBJ.match(parts[0])
    out = [parts[0]]
    for part in parts[1:]:
        if lead and not _LEADING_SUBJ.match(part):
            part = f"{lead.group('s')} {part}"
        out.append(part)
    return out


def _resolve(rule: Rule, predicate: str, obj: str, cat: str | None) -> str | None:
    """The predicate for rules that decide by the object's category."""
    category = category_of(obj)
    if predicate == "*move":
        # "moved to SQLite" is a switch of tool; "moved to Berlin" a new home.
        return f"prefers:{category}" if category in _PREFERENCE else (
            "uses" if category else "lives_in"
        )
    if predicate == "*switch":
        return f"prefers:{category}" if category in _PREFERENCE else "uses"
    if predicate == "*prefer":
        return f"prefers:{category}" if category else "likes"
    if predicate == "prefers":
        return f"prefers:{normalise(cat or '')}" if cat else None
    return predicate


def _drafts(clause: str, speaker: str | None) -> list[FactDraft]:
    out: list[FactDraft] = []
    seen: set[tuple[str, str, str]] = set()
    words = set(_GATE_WORDS.findall(clause.lower()))
    if any(ch.isdigit() for ch in clause):
        words.add("#d")
    for rule in _RULES:
        if rule.gate.isdisjoint(words):
            continue
        for match in rule.pattern.finditer(clause):
            groups = match.groupdict()
            raw_obj = (
                groups["o"] if rule.object_kind == "status" else _phrase(groups["o"],
                                                                         rule.object_kind)
            )
            if not raw_obj:
                continue
            if rule.object_kind == "version":
                subject = (normalise(groups["s"]), groups["s"])
                if subject[0] in _CUT_WORDS or subject[0] in _PRONOUN_SUBJECTS:
                    continue
            else:
                found = _subject(groups["s"], speaker)
                if found is None:
                    continue
                subject = found
            obj = normalise(raw_obj)
            predicate = _resolve(rule, rule.predicate, obj, groups.get("cat"))
            if predicate is None or not obj or obj == subject[0] or obj in _NOT_OBJECTS:
                continue
            if predicate == "status" and subject[0] in _NOT_STATUS_SUBJECTS | {"user"}:
                continue
            action = rule.action
            before = clause[: match.start("o")]
            if action == "assert" and _NEGATION.search(before[match.start() :]):
                action = "retract"
            if action != "retract" and _HEDGE.search(before):
                continue
            replaces = None
            if action == "replace":
                old = groups.get("old")
                replaces = normalise(_phrase(old, rule.object_kind)) if old else None
            key = (subject[0], predicate.split(":")[0], obj)
            if key in seen:
                continue
            seen.add(key)
            out.append(
                FactDraft(subject[0], subject[1], predicate, obj, raw_obj, action, replaces,
                          _shift(clause))
            )
    return out


def extract(text: str, *, speaker: str | None = None) -> Extraction:
    """Entities and fact drafts of one memory's text (a turn's ``speaker`` is its "I")."""
    result = Extraction(entities=find_names(text))
    for sentence in _SENTENCES.split(text):
        if not sentence.strip() or sentence.rstrip().endswith("?"):
            continue
        for clause in _clauses(sentence.strip()):
            result.facts.extend(_drafts(clause, speaker))
    typed = {"name"}
    by_key = {m.key: i for i, m in enumerate(result.entities)}
    for fact in result.facts:  # a fact tells what kind of thing a name is
        base = fact.predicate.split(":")[0]
        for key, kind in ((fact.subject, _SUBJECT_TYPE.get(base, "person")),
                          (fact.object, _OBJECT_TYPE.get(base))):
            at = by_key.get(key)
            if at is not None and kind and result.entities[at].type in typed:
                result.entities[at] = Mention(key, result.entities[at].text, kind)
    known = {m.key for m in result.entities}
    for fact in result.facts:
        if fact.subject not in known and fact.subject not in ("user", "we"):
            known.add(fact.subject)
            kind = _SUBJECT_TYPE.get(fact.predicate, "person")
            result.entities.append(Mention(fact.subject, fact.subject_text, kind))
        base = fact.predicate.split(":")[0]
        if fact.object not in known and base in _OBJECT_TYPE:
            known.add(fact.object)
            result.entities.append(Mention(fact.object, fact.object_text, _OBJECT_TYPE[base]))
    return result
