"""The gate with the real model on a real store: paraphrases get their memory, unrelated
prompts get nothing, among generated distractors (the fixture corpus, both halves)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from aide_memoire import Memory, Settings
from aide_memoire.hooks.clauses import ClauseVectors, clause_vectors
from aide_memoire.hooks.gate import GateTuning, Signals, overlap, prompt_stems
from aide_memoire.hooks.late import TokenVectors, token_vectors
from aide_memoire.hooks.prompt import (
    candidates,
    gate_signals,
    hit_signals,
    prompt_context,
    session_query,
)
from aide_memoire.hooks.service import handle

from .gate_corpus import distractors, load

pytestmark = pytest.mark.slow

NS = "project:app-123abc"
MODEL = Settings.model_fields["embedding_model"].default
BUDGET = 400


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Memory, dict[str, str]]]:
    home: Path = tmp_path_factory.mktemp("gate") / "home"
    with Memory(settings=Settings(home=home, embedding_model=MODEL)) as memory:
        memory.store_many([{"content": t, "kind": "learning"} for t in distractors(1000)],
                          namespace=NS)
        ids: dict[str, str] = {}
        for m in load().memories:
            if m.kind == "turn":
                (ids[m.key],) = memory.store_conversation(
                    [{"speaker": "user", "content": m.content}], namespace=NS,
                    session_id="earlier")
            else:
                ids[m.key] = memory.store(m.content, namespace=NS, kind=m.kind)
        yield memory, ids


def test_the_outside_example_paraphrase_gets_its_memory(
    stored: tuple[Memory, dict[str, str]],
) -> None:
    memory, ids = stored
    shown = prompt_context(memory, NS, "my async test functions are not running at all",
                           budget_tokens=BUDGET, session_id="now")
    assert ids["learning-01"] in shown.ids
    reason = shown.reasons[shown.ids.index(ids["learning-01"])]
    assert reason.gate == "dense" and reason.dense is not None and reason.calibrated is not None
    assert reason.decision == "injected"


def test_paraphrases_of_every_class_get_their_memory(
    stored: tuple[Memory, dict[str, str]],
) -> None:
    memory, ids = stored
    got: dict[str, list[bool]] = {}
    words: list[bool] = []
    for m in load().memories:
        for prompt in m.prompts:
            shown = prompt_context(memory, NS, prompt, budget_tokens=BUDGET, session_id="now")
            got.setdefault(m.cls, []).append(ids[m.key] in shown.ids)
            # The old word-count floor on the same store: 3 of 4 content words in one of
            # recall's first 12 hits.
            terms = prompt_stems(prompt)
            words.append(any(h.id == ids[m.key] and overlap(terms, h.content) >= 0.65
                             for h in memory.recall(prompt, namespace=NS, limit=12)))
    total = [x for xs in got.values() for x in xs]
    # Meaning, not words: well above what the word count found, and no class left out.
    assert sum(total) >= 2 * sum(words) and sum(total) / len(total) >= 0.25, (
        sum(total), sum(words), got)
    assert all(any(xs) for xs in got.values()), got


def test_unrelated_prompts_get_nothing(stored: tuple[Memory, dict[str, str]]) -> None:
    memory, _ = stored
    unrelated = load().unrelated
    given = [u.prompt for u in unrelated
             if prompt_context(memory, NS, u.prompt, budget_tokens=BUDGET).ids]
    assert len(given) / len(unrelated) <= 0.1, given


def test_a_memory_goes_in_once_per_session_through_handle(
    stored: tuple[Memory, dict[str, str]],
) -> None:
    memory, ids = stored
    prompt = "what database did we pick for the order service and why"
    first = handle(memory, {"op": "prompt", "namespace": NS, "prompt": prompt,
                            "session_id": "once"})
    assert ids["decision-01"] in first["ids"]
    assert len(first["ids"]) <= 3 and len(first["text"]) <= BUDGET * 4
    again = handle(memory, {"op": "prompt", "namespace": NS, "prompt": prompt,
                            "session_id": "once", "exclude": first["ids"]})
    assert set(again["ids"]).isdisjoint(first["ids"])


def test_a_turn_of_the_running_session_is_never_injected(
    stored: tuple[Memory, dict[str, str]],
) -> None:
    memory, ids = stored
    # The conversation facts were said in session "earlier": a later session gets them...
    given = [(m.key, prompt) for m in load().memories if m.kind == "turn"
             for prompt in m.prompts
             if ids[m.key] in prompt_context(memory, NS, prompt, budget_tokens=BUDGET,
                                             session_id="later").ids]
    assert given
    # ...that session itself never: they are in its context already.
    for key, prompt in given:
        assert ids[key] not in prompt_context(memory, NS, prompt, budget_tokens=BUDGET,
                                              session_id="earlier").ids


def test_the_dense_profile_scores_every_row_and_keeps_the_best_that_pass(
    stored: tuple[Memory, dict[str, str]],
) -> None:
    memory, _ = stored
    ns = "project:profile-000aaa"
    texts = ["The deploy script needs the VPN to reach the registry.",
             "Our staging cluster runs on three ARM nodes.",
             "Lunch on Fridays is at the Thai place around the corner.",
             "The release notes are written by whoever cuts the release."]
    ids = [memory.store(t, namespace=ns) for t in texts]
    prompt = "the deploy can't reach the container registry"
    profile = memory.internals.services.recall.dense_profile(prompt, namespace=ns, k=3)
    assert profile is not None and profile.rows == len(texts)
    vectors = memory.internals.embedder.encode(texts)
    query = memory.internals.embedder.encode([prompt])[0]
    exact = sorted((float(v @ query) for v in vectors), reverse=True)
    # The mirror scores int8 vectors: within 0.002 of the float cosine (engine/recall/mirror.py).
    assert all(abs(c - e) <= 2e-3 for (_, c), e in zip(profile.best, exact[:3], strict=True))
    assert profile.best[0][0].id == ids[0]
    assert abs(profile.mean - sum(exact) / len(exact)) < 2e-3 and profile.std > 0
    # A forgotten memory is never a candidate again; the others still are.
    memory.forget(ids[0], namespace=ns)
    after = memory.internals.services.recall.dense_profile(prompt, namespace=ns, k=3)
    assert after is not None and ids[0] not in {r.id for r, _ in after.best}
    assert after.rows == len(texts) - 1


def test_the_gate_s_candidates_add_the_dense_best_recall_left_out(
    stored: tuple[Memory, dict[str, str]],
) -> None:
    memory, _ = stored
    prompt = "users get logged out randomly during busy hours"
    hits, profile = candidates(memory, NS, prompt)
    assert profile is not None
    found = [h.id for h in hits]
    assert len(found) == len(set(found))
    assert {r.id for r, _ in profile.best} <= set(found)
    # Every candidate carries its cosine, so the gate reads the same scale for all.
    assert all("dense" in h.scores for h in hits if h.id in {r.id for r, _ in profile.best})
    reasons = prompt_context(memory, NS, prompt, budget_tokens=BUDGET).reasons
    assert all(r.z is not None for r in reasons)


def test_each_candidate_knows_its_dense_rank_and_its_peak_over_the_kth_row(
    stored: tuple[Memory, dict[str, str]],
) -> None:
    memory, _ = stored
    prompt = "the deploy can't reach the container registry"
    hits, profile = candidates(memory, NS, prompt, dense_k=12)
    assert profile is not None and len(profile.best) == 12
    found = hit_signals(hits, prompt_stems(prompt), profile, gap_rank=7)
    rank = {r.id: n for n, (r, _) in enumerate(profile.best, 1)}
    kth = profile.best[6][1]
    for s in found:
        assert s.dense_rank == rank.get(s.id)
        assert s.dense is not None and s.gap == pytest.approx(s.dense - kth)
        assert s.spread == profile.std
    # The six densest rows stand at or above the 7th; the rest of the list at or below it.
    gaps = {s.dense_rank: s.gap for s in found if s.dense_rank is not None}
    assert sorted(gaps) == list(range(1, 13))
    assert all((gaps[n] or 0.0) >= 0 for n in range(1, 8))
    assert all((gaps[n] or 0.0) <= 0 for n in range(7, 13))
    assert gaps[1] == pytest.approx(profile.best[0][1] - kth)


ASYNC = "my async test functions are not running at all"


def _weighted(tuning: GateTuning, signal: str, weight: float) -> GateTuning:
    """``tuning`` with the weight of one signal ("clause" or "late") set."""
    if signal == "clause":
        return dataclasses.replace(tuning, w_clause=weight)
    return dataclasses.replace(tuning, w_late=weight)


def _read(memory: Memory, ids: dict[str, str], signal: str) -> tuple[
        GateTuning, list[Signals], list[Signals], Signals]:
    """The gate's signals for ASYNC with ``signal`` weighed: all, the read ones, the fix's."""
    tuning = _weighted(GateTuning(), signal, 0.5)
    found = gate_signals(memory, NS, ASYNC, prompt_stems(ASYNC), tuning)[1]
    read = [s for s in found if getattr(s, signal) is not None]
    (fix,) = [s for s in found if s.id == ids["learning-01"]]
    return tuning, found, read, fix


def test_the_best_candidates_carry_their_best_clause_s_cosine(
    stored: tuple[Memory, dict[str, str]],
) -> None:
    memory, ids = stored
    tuning, found, read, fix = _read(memory, ids, "clause")
    assert 0 < len(read) <= tuning.clause_candidates
    # The symptom clause ("... silently skipped") is closer to the prompt than the whole.
    assert fix.clause is not None and fix.dense is not None and fix.clause > fix.dense
    # Kept: the same prompt again encodes no clause anew.
    kept = clause_vectors(memory.internals.services.recall.embedder)
    _kept_and_paid_only_when_used(memory, tuning, found, kept, "clause", 0)


def test_the_best_candidates_carry_their_late_score(
    stored: tuple[Memory, dict[str, str]],
) -> None:
    memory, ids = stored
    tuning, found, read, fix = _read(memory, ids, "late")
    assert len(read) == min(tuning.late_candidates, len(found))
    # The fix is among the best candidates, and word by word it holds more of the
    # prompt than any other read candidate.
    assert fix.late is not None
    assert all(fix.late > s.late for s in read if s.id != fix.id and s.late is not None)
    # Kept: the same prompt again runs only the prompt through the model.
    kept = token_vectors(memory.internals.services.recall.embedder)
    _kept_and_paid_only_when_used(memory, tuning, found, kept, "late", 1)


def _kept_and_paid_only_when_used(memory: Memory, tuning: GateTuning,
                                  found: list[Signals], kept: ClauseVectors | TokenVectors,
                                  signal: str, encodes: int) -> None:
    """The same prompt again encodes ``encodes`` texts and reads the same values; with
    no weight on the signal nothing is read at all (the cost is paid only when used)."""
    before = kept.encoded
    again = gate_signals(memory, NS, ASYNC, prompt_stems(ASYNC), tuning)[1]
    assert kept.encoded == before + encodes
    assert [getattr(s, signal) for s in again] == pytest.approx(
        [getattr(s, signal) for s in found])
    off = gate_signals(memory, NS, ASYNC, prompt_stems(ASYNC),
                       _weighted(tuning, signal, 0.0))[1]
    assert all(getattr(s, signal) is None for s in off)


# The session's context on at the prompt's own threshold: the mechanism, not a fitted
# constant (it ships off; docs/hooks.md, round 9).
CONTEXT_ON = dataclasses.replace(GateTuning(), context_terms=2,
                                 context_threshold=GateTuning().threshold)


def _vague_session(memory: Memory, session: str, earlier: str) -> list[str]:
    """A running session whose one exchange so far is ``earlier`` and an answer."""
    return memory.store_conversation(
        [{"speaker": "user", "content": earlier},
         {"speaker": "assistant", "content": "Let me look into that."}],
        namespace=NS, session_id=session)


def test_a_vague_follow_up_reads_the_session_s_last_user_turn_when_on(
    stored: tuple[Memory, dict[str, str]],
) -> None:
    memory, ids = stored
    on = CONTEXT_ON
    # The question asked earlier in the session, then a vague follow-up: its words say
    # nothing...
    turns = _vague_session(memory, "vague-on", ASYNC)
    follow_up = "same problem here now"
    assert session_query(memory, NS, follow_up, "vague-on", 1) == f"{ASYNC} {follow_up}"
    alone = prompt_context(memory, NS, follow_up, budget_tokens=BUDGET, session_id="vague-on")
    assert ids["learning-01"] not in alone.ids
    # ...with the session's last user turn the fix is found, and the reason says how.
    shown = prompt_context(memory, NS, follow_up, budget_tokens=BUDGET,
                           session_id="vague-on", tuning=on)
    assert ids["learning-01"] in shown.ids
    reason = shown.reasons[shown.ids.index(ids["learning-01"])]
    assert reason.query == "context" and reason.score >= on.context_threshold
    # The session's own turns are never injected, nor a memory already seen.
    assert set(turns).isdisjoint(shown.ids)
    seen = prompt_context(memory, NS, follow_up, budget_tokens=BUDGET, session_id="vague-on",
                          tuning=on, exclude={ids["learning-01"]})
    assert ids["learning-01"] not in seen.ids
    # A longer prompt (more content words than context_terms) asks alone.
    longer = "same problem here now with the payment webhook retries"
    assert all(r.query == "prompt" for r in prompt_context(
        memory, NS, longer, budget_tokens=BUDGET, session_id="vague-on", tuning=on).reasons)
    # Without a stored user turn there is no second query.
    assert session_query(memory, NS, follow_up, "no-such-session", 1) is None
    memory.forget_many(turns, namespace=NS)


def test_a_vague_follow_up_after_an_unrelated_turn_gets_nothing(
    stored: tuple[Memory, dict[str, str]],
) -> None:
    memory, _ = stored
    on = CONTEXT_ON
    turns = _vague_session(memory, "vague-off", "add a dark mode toggle to the settings page")
    shown = prompt_context(memory, NS, "same problem here now", budget_tokens=BUDGET,
                           session_id="vague-off", tuning=on)
    assert shown.ids == ()
    memory.forget_many(turns, namespace=NS)
