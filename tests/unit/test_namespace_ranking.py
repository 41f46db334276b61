"""Namespace-confined full-text queries (graph/fulltext.py) and namespace-local BM25
(graph/lexical.py): what a search returns for one namespace does not depend on any other."""

from __future__ import annotations

import re
import time

import pytest

from graph.fulltext import (
    COMMON_WEIGHT,
    CONTENT_WEIGHT,
    content_words,
    in_namespace,
    lucene_query,
    message_query,
    namespace_token,
    pool_query,
)
from graph.lexical import FUZZY_BUDGET, edit_distance, rank, rank_many, tokens
from graph.messages import groups_of
from graph.topic_search import pool_of

FIELDS = ("name", "alias_text", "one_liner")


def doc(name: str, one_liner: str = "", aliases: str = "") -> dict[str, str]:
    return {"name": name, "alias_text": aliases, "one_liner": one_liner}


# -- namespace token ------------------------------------------------------------------------------
def test_namespace_tokens_are_one_lucene_word_and_distinct() -> None:
    spaces = ["bob", "Bob", "BOB", "b-ob", "b_ob", "b.ob", "b:ob", "bo-b", "test-3f9a", "a_0", "a-"]
    tokens_ = [namespace_token(ns) for ns in spaces]
    assert len(set(tokens_)) == len(spaces)  # case and punctuation never collide
    for token in tokens_:
        assert re.fullmatch(r"ns[a-z0-9_]+0", token), token  # one word, survives stemming
    assert namespace_token("sv-Bob") == "nssv_3_bob0"


def test_every_query_is_confined_to_the_namespace_and_adds_no_score() -> None:
    query = in_namespace("alice", lucene_query("Zanzibar merger"))
    assert query == "ns_token:nsalice0^0 AND (zanzibar~ OR merger~)"
    hostile = in_namespace("alice", lucene_query('x") OR ns_token:nsbob0 OR ("'))
    assert hostile.startswith("ns_token:nsalice0^0 AND (")
    assert "ns_token\\:nsbob0" not in hostile and "nsbob0" in hostile  # a word, not a field


def test_the_conversation_query_leaves_common_words_out_unless_nothing_else_is_left() -> None:
    """The message index's English analyzer keeps "what", "did", "we": they matched most
    messages, and Lucene scored every one of them for nothing."""
    text = "What did we decide about the billing migration?"
    assert lucene_query(text, fuzzy=False, common=False) == "decide OR billing OR migration"
    assert lucene_query(text, fuzzy=False) == (
        "what OR did OR we OR decide OR about OR the OR billing OR migration"
    )  # the topic search keeps every word (its BM25 and trigger thresholds weigh them)
    assert content_words("The Who") == ["the", "who"]  # only common words: all of them
    assert content_words("??") == []


# -- the topic search's pool ----------------------------------------------------------------------
def test_the_topic_query_scores_constants_of_the_topic_and_the_question_alone() -> None:
    """Range clauses score their boost in Lucene (no index-wide statistics); a content word
    outweighs every common word a topic can hold; fuzzy clauses match and score nothing."""
    text = "What did we decide about the Billing migration, don't panic"
    assert pool_query(text, fuzzy=False) == " OR ".join([
        '["what" TO "what"]^1', '["did" TO "did"]^1', '["we" TO "we"]^1',
        '["decide" TO "decide"]^256', '["about" TO "about"]^1', '["the" TO "the"]^1',
        '["billing" TO "billing"]^256', '["migration" TO "migration"]^256',
        '["don\'t" TO "don\'t"]^1', '["panic" TO "panic"]^256',
    ])  # fmt: skip
    fuzzy = pool_query("the billing migration", fuzzy=True)
    assert fuzzy.endswith(" OR billing~^0 OR migration~^0")  # "the": too short to be fuzzy
    assert CONTENT_WEIGHT > 32 * 6 * COMMON_WEIGHT  # 32 words at most, 6 fields
    assert pool_query("the the who") == '["the" TO "the"]^256 OR ["who" TO "who"]^256'
    hostile = pool_query('x" TO "z"] OR ns_token:nsbob0 OR ["a*', fuzzy=True)
    for clause in hostile.split(" OR "):  # words only: no field, range or operator of theirs
        assert re.fullmatch(r"""\["([\w']+)" TO "\1"\]\^(1|256)|[\w']+~\^0""", clause), clause
    assert pool_query("??") == ""


def _row(topic_id: str, score: float) -> dict[str, object]:
    return {"topic_id": topic_id, "score": score}


def test_the_pool_takes_whole_groups_of_one_score_in_an_order_of_their_own() -> None:
    """Which of a group of equal scores Lucene returns first follows its document order (other
    tenants' writes move it): the pool never holds part of a group, and orders a group by id."""
    rows = [_row("b", 9), _row("a", 9), _row("d", 5), _row("c", 5), _row("e", 5), _row("f", 1)]
    ids = [str(r["topic_id"]) for r in pool_of(rows, 4, 2)]
    assert ids == ["a", "b"]  # "d", "c", "e" would pass 4: the group is left out whole
    assert [str(r["topic_id"]) for r in pool_of(rows, 5, 2)] == ["a", "b", "c", "d", "e"]
    assert [str(r["topic_id"]) for r in pool_of(rows[::-1], 5, 2)] == ["a", "b", "c", "d", "e"]
    # fewer than k above the cut: the next group whole, however large
    assert [str(r["topic_id"]) for r in pool_of(rows, 1, 3)] == ["a", "b", "c", "d", "e"]
    assert pool_of(rows, 100, 2) == sorted(rows, key=lambda r: (-r["score"], r["topic_id"]))


def test_the_conversation_query_counts_the_english_terms_of_the_content_words() -> None:
    """The message index's terms (stems, possessives and stop words gone), each scoring 1 per
    field holding it: the same messages as the term query, scored by them alone."""
    text = "What did we decide about Mel's parties, the billing migration?"
    assert message_query(text) == " OR ".join(
        f'["{t}" TO "{t}"]^1' for t in ("decid", "mel", "parti", "bill", "migrat")
    )
    assert message_query("the a") == ""  # a stop word only: nothing to search for


def _said(seq: int, score: float) -> dict[str, object]:
    return {"m": {"message_id": f"m{seq}", "seq": seq}, "score": score}


def test_a_large_conversations_pool_takes_whole_groups_oldest_first() -> None:
    rows = [_said(9, 3), _said(2, 2), _said(7, 2), _said(1, 2), _said(4, 1)]
    assert [r["m"] for r in groups_of(rows, 2, 1)] == [{"message_id": "m9", "seq": 9}]
    seqs = [r["m"]["seq"] for r in groups_of(rows, 4, 1)]  # type: ignore[index]
    assert seqs == [9, 1, 2, 7]  # the group of 2 fits whole, oldest first
    assert [r["m"]["seq"] for r in groups_of(rows[::-1], 1, 2)] == [9, 1, 2, 7]  # type: ignore[index]


# -- local BM25 -----------------------------------------------------------------------------------
def test_tokens_follow_the_standard_tokenizer_closely() -> None:
    assert tokens("Zanzibar-merger plan, don't PANIC: v2_final") == [
        "zanzibar", "merger", "plan", "don't", "panic", "v2_final"
    ]  # fmt: skip


def test_bm25_prefers_more_and_rarer_words_in_shorter_fields() -> None:
    docs = [doc("Merger notes"), doc("Zanzibar merger plan"), doc("Zanzibar"), doc("Lunch")]
    scores = rank(["zanzibar", "merger", "plan"], docs, FIELDS)
    assert scores.index(max(scores)) == 1 and scores[3] == 0.0
    single = rank(["zanzibar"], docs, FIELDS)
    assert single[2] > single[1] > 0  # same word, shorter name


def test_scores_depend_only_on_the_documents_given() -> None:
    bob = [doc("Zanzibar merger plan"), doc("Merger notes", "plan for the merger")]
    alone = rank(["zanzibar", "merger", "plan"], bob, FIELDS)
    again = rank(["zanzibar", "merger", "plan"], list(bob), FIELDS)
    assert alone == again
    # a pool of another tenant's "zanzibar" topics changes the numbers: that is why the store
    # ranks each namespace's candidates on their own
    crowded = rank(["zanzibar", "merger", "plan"], bob + [doc("zanzibar")] * 660, FIELDS)
    assert crowded[:2] != alone


def test_fuzzy_words_match_within_two_edits_weighted_by_similarity() -> None:
    docs = [doc("Zanzibar"), doc("Zanzibra"), doc("Zagreb")]
    exact, transposed, far = rank(["zanzibar"], docs, FIELDS, fuzzy=True)
    assert exact > transposed > 0 and far == 0.0
    assert rank(["zanzibar"], docs, FIELDS, fuzzy=False)[1] == 0.0
    assert edit_distance("zanzibar", "zanzibra") == 1  # a transposition is one edit
    assert edit_distance("abc", "abcdef") == 3  # beyond the limit: limit + 1


@pytest.mark.parametrize("fuzzy", [False, True])
def test_ranking_several_queries_at_once_gives_each_its_own_scores(fuzzy: bool) -> None:
    """``rank_many`` tokenizes the candidates once for all queries (the topic search ranks by
    every word and by the content words); each query's scores are ``rank``'s, bit for bit,
    and a fuzzy query spends its own budget."""
    docs = [doc("Zanzibar merger plan", "the plan for the merger", "zanzibar deal"),
            doc("Zanzibra", "a typo of it"), doc("Garden", "", ""), doc("The plan", "plans")]  # fmt: skip
    queries = [["the", "zanzibar", "merger", "plan"], ["zanzibar", "merger"], [], ["the"]]
    together = rank_many(queries, docs, FIELDS, fuzzy=fuzzy)
    assert together == [rank(words, docs, FIELDS, fuzzy=fuzzy) for words in queries]
    assert together[0] != together[1] and together[2] == [0.0] * len(docs)
    words = [f"word{i:02d}xyz" for i in range(32)]
    many = [doc(" ".join(f"word{j:03d}xy" for j in range(40))) for _ in range(50)]
    assert (
        rank_many([words, words], many, FIELDS, fuzzy=fuzzy)
        == [rank(words, many, FIELDS, fuzzy=fuzzy)] * 2
    )


def test_fuzzy_ranking_work_is_bounded() -> None:
    words = [f"word{i:02d}xyz" for i in range(32)]
    docs = [doc(" ".join(f"word{j:03d}xy" for j in range(40))) for _ in range(200)]
    started = time.perf_counter()
    rank(words, docs, FIELDS, fuzzy=True)
    assert time.perf_counter() - started < 5.0  # 32 words x 8,000 tokens, budget-capped
    assert FUZZY_BUDGET <= 10_000


@pytest.mark.parametrize("fuzzy", [False, True])
def test_empty_fields_and_unmatched_words_score_nothing(fuzzy: bool) -> None:
    assert rank(["zzz"], [doc("", ""), doc("a")], FIELDS, fuzzy) == [0.0, 0.0]
    assert rank([], [doc("a")], FIELDS, fuzzy) == [0.0]


def test_field_counts_are_kept_per_text_and_bounded() -> None:
    """A field's tokens are counted once per process and text (an edited text is counted
    afresh); the cache holds at most FIELD_CACHE texts."""
    from graph.lexical import FIELD_CACHE, field_counts

    field_counts.cache_clear()
    first = field_counts("Zanzibar merger plan, the plan")
    assert first == (5, {"zanzibar": 1, "merger": 1, "plan": 2, "the": 1})
    assert field_counts("Zanzibar merger plan, the plan") is first
    assert field_counts("Zanzibar merger plan") == (3, {"zanzibar": 1, "merger": 1, "plan": 1})
    assert field_counts.cache_info().maxsize == FIELD_CACHE
    docs = [{"name": "Zanzibar merger plan", "one_liner": "the plan"}] * 3
    assert rank_many([["plan"]], docs, FIELDS) == [rank(["plan"], docs, FIELDS)]
