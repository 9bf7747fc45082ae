"""The prompt hook's keyword path (hooks/cold.py): the engine's keyword-only answer, from a
read-only store, without importing the engine.

The agreement test builds a store from classes of memories (learnings, decisions,
gotchas, people, conversation turns with speakers and dates, many near-miss distractors
sharing words) and asks it prompts of several shapes (paraphrases, exact words, one
speaker named, questions about time, unrelated ones): the keyword path must return
exactly what ``hooks.service.handle`` returns with no model.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from aide_memoire import Memory, Settings
from aide_memoire.engine.core import settings as settings_module
from aide_memoire.engine.lifecycle.scoring import Weights
from aide_memoire.engine.recall.fusion import RecallTuning
from aide_memoire.engine.storage import migrations
from aide_memoire.engine.storage.readonly import open_lookup
from aide_memoire.engine.storage.sqlite import lookup as sqlite_lookup
from aide_memoire.hooks import cold
from aide_memoire.hooks.service import handle

NS = "project:shop-0a1b2c"
SUBJECTS = ["billing", "search", "checkout", "ingest", "auth", "ledger", "catalog", "gateway"]
THINGS = ["Redis", "Kafka topic", "Postgres replica", "cron job", "feature flag", "Helm chart",
          "retry queue", "S3 bucket", "load balancer", "CI pipeline"]
PEOPLE = ["Ada", "Bram", "Chen", "Dagny", "Emeka", "Farah"]
CLASSES = {
    "learning": "The {s} {t} needs a warm-up call after deploys, otherwise the first "
                "requests time out after {n} ms",
    "decision": "We decided that {p} owns the {s} {t}; changes need their review",
    "gotcha": "Careful: the {s} {t} silently drops messages larger than {n} KB",
    "preference": "{p} prefers the {s} {t} configured in YAML, never in environment variables",
}
TURNS = ["Can you check why the {s} {t} is slow since Monday?",
         "I moved the {s} {t} to port {n} and updated the notes.",
         "{p} said the {s} {t} should be rolled back before Friday.",
         "The {s} tests failed on CI when the {t} answered after {n} ms."]
PROMPTS = ["why does the {s} {t} time out after deploys?",
           "who owns the {s} {t}?",
           "does the {s} {t} drop big messages?",
           "how does {p} want the {s} {t} configured?",
           "when did we move the {s} {t}?",
           "what did {p} say about the {s} {t}?",
           "what did the user say about the {s} {t} port?",
           "{s} {t}",
           "What is the capital of Portugal?",
           "Write a haiku about autumn leaves in the {s} garden",
           "How do I reverse a list in Python?"]


def _fill(template: str, rng: random.Random) -> str:
    return template.format(s=rng.choice(SUBJECTS), t=rng.choice(THINGS), p=rng.choice(PEOPLE),
                           n=rng.randrange(80, 9000))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Memory]]:
    home = tmp_path_factory.mktemp("cold-home")
    rng = random.Random(25)
    with Memory(settings=Settings(home=home, embedding_model="none")) as memory:
        for kind, template in CLASSES.items():
            for _ in range(40):
                memory.store(_fill(template, rng), namespace=NS,
                             kind="learning" if kind == "learning" else "note",
                             importance=rng.choice([0.2, 0.5, 0.9]),
                             tags=[kind])
        start = datetime(2026, 3, 1, tzinfo=UTC)
        for session in range(6):
            turns = [{"content": _fill(rng.choice(TURNS), rng),
                      "speaker": "user" if i % 2 == 0 else "assistant",
                      "observed_at": (start + timedelta(days=session, minutes=i)).isoformat()}
                     for i in range(30)]
            memory.store_conversation(turns, namespace=NS, session_id=f"past-{session}")
        memory.store("Another project's Redis note", namespace="project:other-ffffff")
        # Feedback and access moves lifecycle's multiplier for some rows.
        for hit in memory.recall("billing Redis", namespace=NS, limit=5):
            memory.feedback(hit.id, "helpful", namespace=NS)
        yield home, memory


def _prompts() -> list[str]:
    rng = random.Random(7)
    return [_fill(template, rng) for template in PROMPTS for _ in range(6)]


def test_the_keyword_path_answers_as_the_engine_does(store: tuple[Path, Memory]) -> None:
    home, memory = store
    differ, injected = [], 0
    for n, prompt in enumerate(_prompts()):
        request: dict[str, Any] = {"op": "prompt", "namespace": NS, "prompt": prompt,
                                   "session_id": "past-2" if n % 3 == 0 else f"new-{n}",
                                   "exclude": []}
        # The keyword path first: the engine's recall records access statistics after it
        # has ranked (lifecycle reads them), the read-only path never does.
        found = cold.answer(home, request, environ={})
        engine = handle(memory, request)
        assert found is not None
        injected += bool(engine["ids"])
        if found != engine:
            differ.append((prompt, engine["ids"], found["ids"]))
    assert differ == []
    assert injected >= 15  # the comparison covers answers with memories, not only empty ones


def test_excluded_and_own_session_memories_stay_out(store: tuple[Path, Memory]) -> None:
    home, memory = store
    request: dict[str, Any] = {"op": "prompt", "namespace": NS, "prompt": "billing Redis",
                               "session_id": "s"}
    first = cold.answer(home, request, environ={})
    assert first is not None and first["ids"]
    again = cold.answer(home, {**request, "exclude": first["ids"]}, environ={})
    assert again is not None and not set(again["ids"]) & set(first["ids"])
    assert again == handle(memory, {**request, "exclude": first["ids"]})


def test_the_settings_it_reads_are_the_engines(store: tuple[Path, Memory],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    home, memory = store
    env = {"AIDE_MEMOIRE_HOOK_RECALL_FLOOR": "0.25", "AIDE_MEMOIRE_HOOK_RECALL_TOKENS": "60",
           "AIDE_MEMOIRE_LIFECYCLE_WEIGHT_FEEDBACK": "0.9",
           "AIDE_MEMOIRE_LIFECYCLE_SCORING": "false"}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    request: dict[str, Any] = {"op": "prompt", "namespace": NS, "session_id": "s",
                               "prompt": "who said the checkout cron job moved to a port?"}
    with Memory(settings=Settings.from_env(home=home, embedding_model="none")) as tuned:
        engine = handle(tuned, request)
    assert cold.answer(home, request, environ=env) == engine
    assert engine != handle(memory, request)  # the settings did change the answer


def test_defaults_and_constants_match_the_engines() -> None:
    base = Settings(home=Path("/nonexistent"), embedding_model="none")
    mine = cold.ColdSettings()
    assert (mine.recall_tokens, mine.recall_floor, mine.lifecycle_scoring) == (
        base.hook_recall_tokens, base.hook_recall_floor, base.lifecycle_scoring)
    assert mine.weights == Weights.from_settings(base)
    assert cold.DB_FILENAME == settings_module.DB_FILENAME
    assert sqlite_lookup.APPLICATION_ID == migrations.APPLICATION_ID
    tuning = RecallTuning()
    assert list(tuning.keyword_weights) == list(migrations.FTS_COLUMNS)
    # The stages the keyword path leaves out are off in the tuning recall runs with.
    off = (tuning.session_weight, tuning.recency_weight, tuning.named_weight,
           tuning.addressed_weight, tuning.feedback_docs, tuning.feedback_weight)
    assert off == (0.0, 0.0, 0.0, 0.0, 0, 0.0)
    assert base.entity_bridges is False and base.reranker_model is None


def test_the_bounds_it_checks_are_the_settings() -> None:
    schema = Settings.model_json_schema()["properties"]
    for name, (low, high, exclusive) in cold.BOUNDS.items():
        field = schema[name]
        assert field.get("exclusiveMinimum" if exclusive else "minimum") == low, name
        assert field.get("maximum") == high, name


@pytest.mark.parametrize("env", [{"AIDE_MEMOIRE_DATABASE_URL": "postgresql://x@y/z"},
                                 {"AIDE_MEMOIRE_HOOK_RECALL_FLOOR": "lots"},
                                 {"AIDE_MEMOIRE_HOOK_RECALL_FLOOR": "1.5"},
                                 {"AIDE_MEMOIRE_HOOK_RECALL_TOKENS": "10"},
                                 {"AIDE_MEMOIRE_LIFECYCLE_HALF_LIFE_DAYS": "0"},
                                 {"AIDE_MEMOIRE_LIFECYCLE_SCORING": "maybe"},
                                 {"AIDE_MEMOIRE_SQLITE_DRIVER": "oracle"}])
def test_it_steps_aside_where_only_the_engine_can_answer(
    store: tuple[Path, Memory], env: dict[str, str]
) -> None:
    home, _ = store
    request = {"op": "prompt", "namespace": NS, "prompt": "billing Redis", "session_id": "s"}
    assert cold.answer(home, request, environ=env) is None


def test_no_store_a_foreign_file_or_an_unreadable_one_is_no_lookup(tmp_path: Path) -> None:
    assert open_lookup(tmp_path / "memory.db") is None
    foreign = tmp_path / "foreign.db"
    import sqlite3

    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE memories (x)")
        conn.execute("CREATE TABLE memory_fts (y)")
    assert open_lookup(foreign) is None  # no aide-memoire application id
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(os.urandom(8192))  # as an encrypted store looks without its key
    assert open_lookup(garbage) is None


def test_it_never_writes(store: tuple[Path, Memory]) -> None:
    home, _ = store
    lookup = open_lookup(home / "memory.db")
    assert lookup is not None
    try:
        with pytest.raises(lookup.Error):
            lookup.conn.execute("DELETE FROM memories")
    finally:
        lookup.close()


def test_the_hook_process_imports_no_engine_and_prints_the_engines_answer(
    store: tuple[Path, Memory], tmp_path: Path
) -> None:
    home, memory = store
    project = tmp_path / "shop"
    project.mkdir()
    from aide_memoire.engine.core.projects import project_namespace

    namespace = project_namespace(project)
    prompt = "why does the billing Redis time out after deploys?"
    memory.store("The billing Redis needs a warm-up call after deploys, otherwise the first "
                 "requests time out", namespace=namespace)
    expected = handle(memory, {"op": "prompt", "namespace": namespace, "prompt": prompt,
                               "session_id": "fresh"})
    assert expected["ids"]
    probe = (
        "import sys; from aide_memoire.cli import entry; entry.main(); "
        "third = sorted({m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names)"
        " - {'aide_memoire', 'sqlean', 'pysqlite3', '_distutils_hack', '__main__'}); "
        "engine = sorted(m for m in sys.modules if m.startswith(('aide_memoire.engine.facade', "
        "'aide_memoire.engine.services', 'aide_memoire.engine.runtime', "
        "'aide_memoire.engine.recall.recaller', 'aide_memoire.engine.recall.embed', "
        "'aide_memoire.engine.storage.store', 'aide_memoire.engine.storage.db', "
        "'aide_memoire.engine.storage.migrations', 'aide_memoire.engine.trust.screen', "
        "'aide_memoire.engine.trust.models', 'aide_memoire.engine.core.settings', "
        "'aide_memoire.engine.core.models'))); "
        "print('LOADED', third, engine, file=sys.stderr)"
    )
    ask = {"session_id": "fresh", "cwd": str(project), "prompt": prompt}
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIDE_MEMOIRE_")}
    done = subprocess.run(
        [sys.executable, "-c", probe, "--home", str(home), "hook", "user-prompt-submit"],
        input=json.dumps(ask).encode(), capture_output=True, check=True,
        env={**env, "AIDE_MEMOIRE_HOOK_DAEMON": "false"},
    )
    assert done.stdout.decode().strip() == expected["text"]
    assert b"LOADED [] []" in done.stderr, done.stderr.decode()[-2000:]
    log = (home / "logs" / "hooks.log").read_text()
    assert "keyword path unavailable" not in log
    # The log line is written after the answer, by a child the hook leaves behind.
    path = home / "hooks" / "injections.jsonl"
    deadline = time.monotonic() + 60
    while '"fresh"' not in (path.read_text() if path.exists() else ""):
        assert time.monotonic() < deadline, "the injection was never logged"
        time.sleep(0.1)
    served = [json.loads(line) for line in path.read_text().splitlines()]
    assert served[-1]["session_id"] == "fresh" and served[-1]["served_by"] == "process"
