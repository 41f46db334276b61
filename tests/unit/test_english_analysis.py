"""The full-text indexes' analysis in Python (text/analysis.py) and the conversation's ranking
by the namespace's own BM25 over it (graph/messages.py rank_hits). Lucene's own hits are checked
against it word by word in tests/integration/test_message_ranking.py."""

from __future__ import annotations

from typing import Any

from graph.lexical import ENGLISH, rank
from graph.messages import MESSAGE_FIELDS, rank_hits
from text.analysis import english_terms, standard_tokens


def test_the_standard_tokenizer_joins_what_lucene_joins() -> None:
    text = "Hello node.js e.g. U.S.A. 3.5 1,000 it's O'Neil's a-b foo_bar x.1 東京"
    assert standard_tokens(text) == [
        "hello", "node.js", "e.g", "u.s.a", "3.5", "1,000", "it's", "o'neil's", "a", "b",
        "foo_bar", "x", "1", "東", "京",
    ]  # fmt: skip


def test_the_english_analyzer_drops_possessives_and_stop_words_and_stems() -> None:
    said = "Caroline's camping trips were the BEST; ponies running us"
    assert english_terms(said) == ["carolin", "camp", "trip", "were", "best", "poni", "run", "us"]
    assert english_terms("Caroline\u2019s") == ["carolin"]  # the typographic apostrophe too
    assert english_terms("the and of it") == []  # Lucene's stop set


def _hit(i: int, content: str, speaker: str = "") -> dict[str, Any]:
    return {"m": {"message_id": f"m{i}", "seq": i, "content": content, "speaker": speaker}}


def test_messages_are_ranked_by_stems_over_their_own_candidates() -> None:
    hits = [
        _hit(0, "We talked about the weather."),
        _hit(1, "The paintings were great"),
        _hit(2, "I painted it"),
        _hit(3, "painting painting painting"),
    ]
    ranked = rank_hits(["painting"], hits, 3)
    assert [h["m"]["message_id"] for h, _ in ranked] == ["m3", "m2", "m1"]  # stems: paint
    docs = [{f: str(h["m"].get(f) or "") for f in MESSAGE_FIELDS} for h in hits]
    assert [s for _, s in ranked] == sorted(
        rank(["painting"], docs, MESSAGE_FIELDS, analyze=ENGLISH), reverse=True
    )[:3]


def test_equal_scores_go_to_the_older_message_whatever_the_index_order() -> None:
    hits = [_hit(5, "the lake"), _hit(2, "the lake"), _hit(9, "a lake")]
    assert [h["m"]["seq"] for h, _ in rank_hits(["lake"], hits, 3)] == [2, 5, 9]
    assert [h["m"]["seq"] for h, _ in rank_hits(["lake"], hits[::-1], 3)] == [2, 5, 9]


def test_a_basis_adds_statistics_but_no_hits() -> None:
    """A window's messages ranked with the whole conversation's candidates counted: the same
    message scores what it scores in the whole conversation's search."""
    window = [_hit(7, "the lake was cold")]
    whole = [_hit(i, "lake lake lake cold") for i in range(5)] + window
    alone = rank_hits(["lake", "cold"], window, 5)
    with_basis = rank_hits(["lake", "cold"], window, 5, basis=whole)
    in_whole = dict((h["m"]["message_id"], s) for h, s in rank_hits(["lake", "cold"], whole, 10))
    assert [h["m"]["message_id"] for h, _ in with_basis] == ["m7"]
    assert with_basis[0][1] == in_whole["m7"] != alone[0][1]


def test_a_candidate_that_shares_no_term_is_left_out() -> None:
    assert rank_hits(["zanzibar"], [_hit(0, "the lake")], 5) == []
