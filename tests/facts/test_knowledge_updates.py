"""Knowledge updates: the current value first now, the old value as of before the change.

Each scenario stores an old statement (January) and a change (June), stated plainly or in
passing, as notes or as conversation turns, then checks recall order now and as of
March, and the facts listing now and then.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from aide_memoire import Memory

from .conftest import facts_settings

OLD_AT = "2024-01-15T10:00:00Z"
NEW_AT = "2024-06-15T10:00:00Z"
THEN = "2024-03-01T00:00:00Z"


@dataclass(frozen=True)
class Scenario:
    name: str
    old: str
    new: str
    query: str
    subject: str | None  # facts are checked when a subject is given
    predicate: str = ""
    now: str = ""  # the current value (normalised)
    then: str = ""  # the value as of THEN
    speaker: str | None = None  # stored as conversation turns of this speaker
    explicit: bool = False  # the change names what it supersedes


S = Scenario
SCENARIOS = [
    # people: jobs
    S("job-left-joined", "Alice works at Acme Corp.", "Alice left Acme Corp and joined Globex.",
      "Where does Alice work?", "alice", "works_at", "globex", "acme corp"),
    S("job-employed-by", "Bob is employed by Initech.", "Bob joined Hooli last week.",
      "Which company does Bob work for?", "bob", "works_at", "hooli", "initech"),
    S("job-the-org", "Carol works for the BBC.", "Carol started a new job at Reuters.",
      "Where is Carol working?", "carol", "works_at", "reuters", "bbc"),
    S("job-role-at", "Dan is a software engineer at Stripe.", "Dan got a job at Shopify.",
      "Which company is Dan at?", "dan", "works_at", "shopify", "stripe"),
    S("job-quit", "Erin works at Pfizer as a chemist.", "Erin quit Pfizer and joined Moderna.",
      "Erin's employer", "erin", "works_at", "moderna", "pfizer"),
    S("job-possessive", "Frank's employer is Siemens.", "Frank's new employer is Bosch.",
      "Who employs Frank?", "frank", "works_at", "bosch", "siemens"),
    S("job-since", "Grace works at Google.", "Grace has been working at OpenAI since spring.",
      "Where does Grace work?", "grace", "works_at", "openai", "google"),
    S("job-turns", "I work at Crumbs Bakery.", "I left Crumbs Bakery to join Dough Co.",
      "Where does Sam work?", "sam", "works_at", "dough co", "crumbs bakery", speaker="Sam"),
    # people: homes
    S("home-moved-passing", "I live in Boston.", "Oh, and I moved to Berlin last month.",
      "Where do I live?", "user", "lives_in", "berlin", "boston"),
    S("home-relocated", "Hannah lives in Lisbon.", "Hannah relocated to Porto.",
      "Which city does Hannah live in?", "hannah", "lives_in", "porto", "lisbon"),
    S("home-based", "Ivan is based in Toronto.",
      "Ivan moved to Vancouver in spring, and loves it there.",
      "Where is Ivan based?", "ivan", "lives_in", "vancouver", "toronto"),
    S("home-moved-back", "Julia's home is Madrid.", "Julia moved back to Seville.",
      "Where is Julia's home?", "julia", "lives_in", "seville", "madrid"),
    S("home-turns", "I live in Seoul with my sister.", "Big news: I moved to Busan last week!",
      "Where does Kim live?", "kim", "lives_in", "busan", "seoul", speaker="Kim"),
    S("home-now-living", "Liam lives in Dublin.", "Liam is now living in Cork.",
      "Where does Liam live?", "liam", "lives_in", "cork", "dublin"),
    S("home-turns-passing", "I live in Austin.",
      "We're settling in fine since I moved to Denver.",
      "Where does Tess live?", "tess", "lives_in", "denver", "austin", speaker="Tess"),
    # people: roles
    S("role-promoted", "Mia is a junior developer.", "Mia was promoted to senior developer.",
      "What is Mia's role?", "mia", "role", "senior developer", "junior developer"),
    S("role-works-as", "Noah works as a teacher.", "Noah now works as a school principal.",
      "What does Noah do for a living?", "noah", "role", "school principal", "teacher"),
    S("role-title", "Olivia's title is product manager.",
      "Olivia's new title is director of product.",
      "What is Olivia's title?", "olivia", "role", "director of product", "product manager"),
    S("role-turns", "I'm a nurse at the county hospital.", "I became a midwife this spring.",
      "What is Pat's job?", "pat", "role", "midwife", "nurse", speaker="Pat"),
    # versions
    S("version-upgraded", "We use numpy 1.26 in the pipeline.",
      "We upgraded numpy to 2.1 yesterday.",
      "Which numpy version do we use?", "numpy", "uses_version", "2.1", "1.26"),
    S("version-bumped", "The service runs on Python 3.10.",
      "Bumped Python to 3.12 across the service.",
      "Which Python version does the service run?", "python", "uses_version", "3.12", "3.10"),
    S("version-pinned", "Django is pinned to 4.2.", "Django was upgraded to 5.0 last week.",
      "Which Django version?", "django", "uses_version", "5.0", "4.2"),
    S("version-at", "We are running Postgres 14 in production.",
      "Postgres is now at version 16 after the migration.",
      "What Postgres version runs in production?", "postgres", "uses_version", "16", "14"),
    S("version-from-to", "The app requires React 17.", "We migrated React from 17 to 18.",
      "Which React version does the app use?", "react", "uses_version", "18", "17"),
    S("version-node", "Node is at 18 on the build machines.",
      "We upgraded Node to 20 last month.",
      "Which Node version is on the build machines?", "node", "uses_version", "20", "18"),
    S("version-passing", "We pin pandas 1.5 for the reports.",
      "Reports are faster since pandas has been bumped to 2.2.",
      "Which pandas version do the reports use?", "pandas", "uses_version", "2.2", "1.5"),
    # project status
    S("status-blocked", "The billing migration is in progress.",
      "The billing migration is now blocked on legal review.",
      "What is the status of the billing migration?", "billing migration", "status",
      "blocked", "in progress"),
    S("status-shipped", "Project Apollo is on hold.", "Project Apollo has been shipped.",
      "Project Apollo status", "project apollo", "status", "shipped", "on hold"),
    S("status-passing", "The search rewrite is paused.",
      "Good news, the search rewrite is done.",
      "Is the search rewrite finished?", "search rewrite", "status", "done", "paused"),
    S("status-deprecated", "The API v1 is active.", "The API v1 is deprecated.",
      "Is API v1 still supported?", "api v1", "status", "deprecated", "active"),
    S("status-ticket", "Ticket ENG-42 is in review.", "Ticket ENG-42 was merged this morning.",
      "ENG-42 state", "ticket eng-42", "status", "merged", "in review"),
    # tools and preferences
    S("tool-switched", "We use Postgres for storage.", "We switched from Postgres to SQLite.",
      "Which database do we use for storage?", "we", "uses", "sqlite", "postgres"),
    S("tool-ci", "The team deploys with Jenkins.",
      "We migrated from Jenkins to GitHub Actions.",
      "What do we deploy with?", "we", "uses", "github actions", "jenkins"),
    S("pref-theme", "I prefer dark mode.", "I switched to light mode, easier on the eyes.",
      "Which theme do I prefer?", "user", "prefers", "light mode", "dark mode"),
    S("tool-editor", "I use Vim for everything.", "I switched from Vim to VS Code.",
      "Which editor do I use?", "user", "uses", "vs code", "vim"),
    S("pref-favourite", "My favorite editor is Emacs.", "My favorite editor is now Neovim.",
      "What is my favorite editor?", "user", "prefers", "neovim", "emacs"),
    S("pref-drink", "I prefer coffee in the morning.", "I've switched to green tea.",
      "What do I drink in the morning?", "user", "prefers", "green tea", "coffee"),
    S("pref-indent", "I prefer tabs over spaces.", "I prefer spaces now.",
      "Tabs or spaces?", "user", "prefers", "spaces", "tabs"),
    S("tool-hosting", "We host on Heroku.", "We migrated from Heroku to Fly.io.",
      "Where do we host?", "we", "uses", "fly.io", "heroku"),
    S("tool-replaced", "We use nose for tests.", "We replaced nose with pytest.",
      "Which test runner do we use?", "we", "uses", "pytest", "nose"),
    S("like-retracted", "Uma likes sushi.", "Uma no longer likes sushi; she is vegan now.",
      "Does Uma like sushi?", "uma", "likes", "", "sushi"),
    # explicit supersession (no rule reads these)
    S("explicit-deploy", "Deploys go through Jenkins jobs.", "Deploys go through Argo CD.",
      "How do deploys go out?", None, explicit=True),
    S("explicit-date", "The launch date is March 3.", "The launch date is April 10.",
      "When is the launch date?", None, explicit=True),
    S("explicit-turn", "The standup is at 9.", "The standup is at 10 from now on.",
      "When is the standup?", None, speaker="Quinn", explicit=True),
]


@pytest.fixture(scope="module")
def memory(
    request: pytest.FixtureRequest, facts_backend: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Memory]:
    """One store with the real model per backend; every scenario has its namespace."""
    home: Path = tmp_path_factory.mktemp(f"ku-{facts_backend}")
    with facts_settings(request, facts_backend, home) as settings, Memory(settings=settings) as m:
        yield m


def _store(memory: Memory, s: Scenario, namespace: str) -> tuple[str, str]:
    if s.speaker:
        (old,) = memory.store_conversation(
            [{"speaker": s.speaker, "content": s.old}], namespace=namespace, observed_at=OLD_AT,
            session_id="one",
        )
        if s.explicit:
            new = memory.store(s.new, namespace=namespace, observed_at=NEW_AT, supersedes=old)
        else:
            (new,) = memory.store_conversation(
                [{"speaker": s.speaker, "content": s.new}], namespace=namespace,
                observed_at=NEW_AT, session_id="two",
            )
        return old, new
    old = memory.store(s.old, namespace=namespace, observed_at=OLD_AT)
    new = memory.store(s.new, namespace=namespace, observed_at=NEW_AT,
                       supersedes=old if s.explicit else None)
    return old, new


def test_at_least_forty_scenarios() -> None:
    assert len(SCENARIOS) >= 40
    assert len({s.name for s in SCENARIOS}) == len(SCENARIOS)


@pytest.mark.parametrize("s", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_knowledge_update(memory: Memory, s: Scenario) -> None:
    namespace = f"ku:{s.name}"
    # Unrelated memories around them, so that ranking has something to get wrong.
    memory.store_many(
        [{"content": "The office coffee machine was fixed.", "observed_at": OLD_AT},
         {"content": "Lunch on Friday is pizza.", "observed_at": NEW_AT}],
        namespace=namespace,
    )
    old, new = _store(memory, s, namespace)

    now = memory.recall(s.query, namespace=namespace, limit=5)
    assert now[0].id == new, f"now: {[h.content for h in now]}"
    assert old not in [h.id for h in now[: [h.id for h in now].index(new)]]
    history = memory.recall(s.query, namespace=namespace, limit=5, include_superseded=True)
    ids = [h.id for h in history]
    assert old in ids and ids.index(new) < ids.index(old), [h.content for h in history]
    assert next(h for h in history if h.id == old).superseded_by == new

    then = memory.recall(s.query, namespace=namespace, limit=5, as_of=THEN)
    assert then[0].id == old, f"then: {[h.content for h in then]}"
    assert new not in [h.id for h in then]

    if s.subject is None:
        return
    current = memory.facts(s.subject, namespace=namespace, predicate=s.predicate)
    assert [f.object for f in current] == ([s.now] if s.now else []), current
    before = memory.facts(s.subject, namespace=namespace, predicate=s.predicate, as_of=THEN)
    assert [f.object for f in before] == [s.then], before
    history_facts = memory.facts(
        s.subject, namespace=namespace, predicate=s.predicate, include_history=True
    )
    closed = [f for f in history_facts if f.object == s.then]
    assert closed and closed[0].valid_to is not None and closed[0].superseded_by == new
