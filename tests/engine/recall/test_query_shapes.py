"""Query shapes: identifier-shaped queries lean on BM25, questions about time prefer a
turn that states a time. Built from classes of input, not from benchmark questions."""

from __future__ import annotations

from dataclasses import replace

import pytest

from aide_memoire import Memory
from aide_memoire.engine.core.text import QueryShape, feedback_terms, query_shape, states_time
from aide_memoire.engine.recall.fusion import Candidates, RecallTuning, fuse, prefer_timed

IDENTIFIERS = [
    "RETRY_BUDGET_MS",  # ALL_CAPS with underscores
    "max_pool_size",  # snake_case
    "os.path.realpath",  # dotted name
    "settings.toml",  # file name
    "/var/lib/app/state",  # absolute path
    "src/cache/evict.py",  # relative path
    "Cache::evict",  # scoped name
    "ERR-40913",  # code with a digit
    "fetchUserProfile",  # camelCase
    "HTTP2",  # capitals with a digit
    "4f9c2ab",  # short commit hash
    "v3.2.1",  # version
]
PROSE = [
    "what did we decide about the cache",
    "U.S. offices and their opening hours",
    "the mother-in-law's well-known recipe",
    "artists/bands we saw and/or liked",
    "J.K. Rowling quote",
    "Why is Priya worried",
]


@pytest.mark.parametrize("identifier", IDENTIFIERS)
def test_identifier_shapes_are_recognised_alone_and_in_a_sentence(identifier: str) -> None:
    assert query_shape(identifier).identifier
    assert query_shape(f"what does {identifier} control?").identifier


@pytest.mark.parametrize("text", PROSE)
def test_prose_is_not_an_identifier(text: str) -> None:
    assert not query_shape(text).identifier


@pytest.mark.parametrize(
    "question",
    ["When did Ines move to Porto?", "how long ago did the outage start",
     "Since when has the cron job failed?", "What year did Tom join?",
     "How many weeks has the migration taken?", "which month was the audit",
     "In what year did Tom join?", "So when is the party?"],
)
def test_questions_about_time(question: str) -> None:
    assert query_shape(question).temporal


@pytest.mark.parametrize(
    "question", ["Where does Ines live?", "Who owns the billing service?", "Why did it fail?",
                 # "when" / "how long" joining a clause inside the sentence ask no time
                 "which team is paged when the proxy fails",
                 "limit how long a report query may run",
                 "What did Ines cook when her parents visited?"]
)
def test_other_questions_are_not_about_time(question: str) -> None:
    assert not query_shape(question).temporal


@pytest.mark.parametrize(
    "text",
    ["I went there yesterday", "We shipped it last week", "That was two years ago",
     "The audit is in March", "See you on Friday", "It opened in 1998", "In May we moved"],
)
def test_statements_of_time(text: str) -> None:
    assert states_time(text)


@pytest.mark.parametrize(
    "text", ["You may like the new office", "The build is green", "Priya owns the service"]
)
def test_statements_without_time(text: str) -> None:
    assert not states_time(text)


def test_identifier_weight_replaces_the_keyword_weight() -> None:
    # Row 1 matches the identifier exactly; row 2 is the dense side's favourite.
    found = Candidates(keyword={1: 5.0, 3: 1.0}, dense={1: 0.2, 2: 0.9, 3: 0.1},
                       dense_low=0.1, dense_high=0.9, dense_live=True,
                       shape=QueryShape(identifier=True))
    tuning = RecallTuning(keyword_weight=0.3, identifier_keyword_weight=0.75)
    fused = fuse(found, tuning)
    assert max(fused, key=fused.__getitem__) == 1
    plain = fuse(replace(found, shape=QueryShape()), tuning)
    assert max(plain, key=plain.__getitem__) == 2


def test_prefer_timed_lifts_only_dated_rows_of_time_questions() -> None:
    fused = {1: 0.50, 2: 0.45, 3: 0.40}
    texts = {1: "I love the pottery class", 2: "I went to the pottery class yesterday",
             3: "Pottery is fun"}
    tuning = RecallTuning(timed_boost=0.1)
    out = prefer_timed(fused, QueryShape(temporal=True), tuning,
                       lambda rows: {r: texts[r] for r in rows})
    assert max(out, key=out.__getitem__) == 2 and out[1] == fused[1] and out[3] == fused[3]
    same = prefer_timed(fused, QueryShape(), tuning, lambda rows: {r: texts[r] for r in rows})
    assert same == fused


def test_feedback_terms_are_words_the_best_rows_share() -> None:
    texts = ["the kiln fired the glaze", "glaze cracked in the kiln", "a cat sat"]
    assert feedback_terms(texts, {"pottery"}, 5) == ["glaze", "kiln"]
    assert feedback_terms(texts, {"glaze"}, 5) == ["kiln"]


@pytest.fixture(scope="module")
def hybrid(tmp_path_factory: pytest.TempPathFactory) -> Memory:
    memory = Memory(tmp_path_factory.mktemp("shapes"))
    assert memory.internals.embedder.wait(), memory.internals.embedder.error
    return memory


# Each class: the memory holding the identifier, and near paraphrases without it.
IDENTIFIER_CASES = [
    ("RETRY_BUDGET_MS", "Set RETRY_BUDGET_MS to 900 for the payments client",
     ["The payments client should give up retrying after nine hundred milliseconds",
      "Retry budgets for the payments client are measured in milliseconds",
      "Payments client retries are capped by a time budget"]),
    ("fetchUserProfile", "fetchUserProfile caches for ten minutes",
     ["Fetching a user's profile is cached for ten minutes",
      "The user profile fetch is cached briefly", "Profiles of users are fetched then cached"]),
    ("ERR-40913", "ERR-40913 appears when the upload token expired",
     ["Uploads fail with an error once their token has expired",
      "An expired upload token produces an error", "Error codes for uploads with old tokens"]),
]


@pytest.mark.parametrize(("identifier", "target", "near"), IDENTIFIER_CASES)
def test_identifier_query_ranks_the_exact_identifier_first(
    hybrid: Memory, identifier: str, target: str, near: list[str]
) -> None:
    ns = "ident-" + "".join(c for c in identifier.lower() if c.isalnum())
    wanted = hybrid.store(target, namespace=ns)
    hybrid.store_many([{"content": text} for text in near], namespace=ns)
    hits = hybrid.recall(f"what about {identifier}?", namespace=ns, limit=4, pure=True)
    assert hits[0].id == wanted
    assert hits[0].ranks["bm25"] == 1


def test_when_question_prefers_the_turn_that_states_a_time(hybrid: Memory) -> None:
    ns = "when"
    turns = [
        ("Rosa", "The pottery workshop downtown is my favourite place"),
        ("Sam", "Which pottery workshop? The one with the big kilns?"),
        ("Rosa", "Yes! I went to the pottery workshop yesterday with my sister"),
        ("Sam", "I should try a pottery workshop some time, it sounds relaxing"),
        ("Rosa", "The pottery workshop teachers are very patient with beginners"),
    ]
    ids = hybrid.store_conversation(
        [{"speaker": s, "content": c} for s, c in turns], namespace=ns, session_id="s1",
        observed_at="2024-03-09T10:00:00Z",
    )
    question = "When did Rosa go to the pottery workshop?"
    hits = hybrid.recall(question, namespace=ns, limit=5, pure=True)
    assert hits[0].id == ids[2]
    tuning = hybrid.internals.recaller.tuning
    try:
        hybrid.internals.recaller.tuning = replace(tuning, timed_boost=0.0)
        without = hybrid.recall(question, namespace=ns, limit=5, pure=True)
    finally:
        hybrid.internals.recaller.tuning = tuning
    assert hits[0].score > without[[h.id for h in without].index(ids[2])].score
