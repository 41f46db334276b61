"""Passages of a message (text/passages.py), the fusion of the evidence (retrieval/evidence.py)
and the passage indexer over an in-memory store (retrieval/passage_index.py). No I/O."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from graph.messages import MessageHit
from graph.models import Message
from graph.passages import PendingMessage
from retrieval.embedding import MiniLMEmbedder, cache_scope, current_scope
from retrieval.evidence import fuse_evidence, with_scoped
from retrieval.passage_index import PassageIndexer
from tests.fakes.embedder import HashEmbedder
from tests.fakes.passages import FakePassages
from tests.unit.test_vector_cache_scope import CountingEncoder
from text.passages import MAX_WORDS, OTHER_PASSAGES, USER_PASSAGES, message_passages, passages

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def test_a_passage_is_a_sentence_and_short_ones_join_the_next() -> None:
    text = (
        "Hi! I bought a red Mazda yesterday at the dealer. Thanks. It cost far more than I hoped."
    )
    assert passages(text, 10) == [
        "Hi! I bought a red Mazda yesterday at the dealer.",
        "Thanks. It cost far more than I hoped.",
    ]


def test_a_short_tail_joins_the_passage_before_and_empty_text_has_none() -> None:
    assert passages("One two three four five six seven. Ok.", 4) == [
        "One two three four five six seven. Ok."
    ]
    assert passages("Ok.", 4) == ["Ok."]
    assert passages("   ", 4) == []


def test_joined_short_sentences_stop_at_the_word_cap() -> None:
    short = " ".join(["Yes indeed."] * 100)  # two words each: they join, up to MAX_WORDS
    got = passages(short, 100)
    assert len(got) > 1
    assert all(len(p.split()) <= MAX_WORDS for p in got)


def test_the_count_per_message_is_bounded_by_role() -> None:
    long = " ".join(f"Sentence number {i} says something rather specific here." for i in range(40))
    assert len(message_passages(long, "user")) == USER_PASSAGES
    assert len(message_passages(long, "assistant")) == OTHER_PASSAGES
    assert message_passages(long, "assistant")[0].startswith("Sentence number 0 ")


def _hit(mid: str, score: float, passages: tuple[str, ...] = ()) -> MessageHit:
    m = Message(message_id=mid, namespace="ns", role="user", content=f"text {mid}", at=AT)
    return MessageHit(m, score, (), passages)


def test_without_dense_hits_the_lexical_evidence_is_unchanged() -> None:
    lexical = [_hit("a", 9.0), _hit("b", 3.0)]
    assert fuse_evidence(lexical, [], 0.5) == lexical


def test_fusion_adds_messages_found_by_meaning_and_keeps_their_passages() -> None:
    lexical = [_hit("a", 10.0), _hit("b", 5.0)]
    dense = [_hit("c", 0.9, ("the passage of c",)), _hit("b", 0.8, ("b said",)), _hit("d", 0.5)]
    fused = fuse_evidence(lexical, dense, 0.5)
    ids = [h.message.message_id for h in fused]
    assert set(ids) == {"a", "b", "c", "d"}
    scores = {h.message.message_id: h.score for h in fused}
    # a: best BM25 only (0.5); c: nearest only (0.5); b: half BM25 + 3/4 of the cosine range
    assert scores["a"] == 0.5 and scores["c"] == 0.5
    assert scores["b"] == 0.5 * 0.5 + 0.5 * (0.8 - 0.5) / (0.9 - 0.5)
    assert ids[0] == "b" and ids[-1] == "d"  # d: the farthest, found by nothing else
    by_id = {h.message.message_id: h for h in fused}
    assert by_id["c"].passages == ("the passage of c",)
    assert by_id["b"].passages == ("b said",)  # the lexical hit gains the dense passages


def test_the_dense_weight_decides_between_a_word_match_and_a_meaning_match() -> None:
    lexical = [_hit("a", 10.0), _hit("x", 1.0)]
    dense = [_hit("c", 0.9), _hit("y", 0.1)]
    words = [h.message.message_id for h in fuse_evidence(lexical, dense, 0.2)]
    meaning = [h.message.message_id for h in fuse_evidence(lexical, dense, 0.8)]
    assert words[0] == "a" and meaning[0] == "c"


def test_the_indexer_writes_every_pending_message_of_its_namespace_in_batches() -> None:
    store = FakePassages([
        PendingMessage("ns", f"m{i}", "user", f"Message {i} says something. Then more of it.")
        for i in range(5)
    ] + [PendingMessage("other", "o1", "user", "Not mine.")])  # fmt: skip
    embedder = HashEmbedder()
    indexer = PassageIndexer(store, embedder, batch=2)
    assert indexer.run("ns") == 5
    assert [m.message_id for m in store.left] == ["o1"]
    assert len(embedder.calls) == 3  # batches of 2, 2, 1 messages: one embedding call each
    for m in store.written:
        assert m.texts == message_passages(m.content, "user")
        assert len(m.vectors) == len(m.texts)
        assert m.vectors[0] == embedder.vector(m.texts[0])
    assert indexer.run("ns") == 0


class ScopeRecorder(HashEmbedder):
    """A ``HashEmbedder`` that notes the namespace scope each call ran in."""

    def __init__(self) -> None:
        super().__init__()
        self.scopes: list[str | None] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.scopes.append(current_scope())
        return super().embed(texts)


def test_a_mixed_batch_embeds_each_namespace_in_its_own_scope() -> None:
    store = FakePassages([
        PendingMessage("alice", "a1", "user", "Alice bought a red kayak. It was on sale."),
        PendingMessage("bob", "b1", "user", "Bob fixed the shed roof last weekend."),
        PendingMessage("alice", "a2", "assistant", "Kayaks need a spray skirt in cold water."),
    ])  # fmt: skip
    embedder = ScopeRecorder()
    assert PassageIndexer(store, embedder, batch=8).run() == 3
    assert embedder.scopes == ["alice", "bob"]  # one call per namespace, each in its scope
    assert current_scope() is None  # the scope ends with the call
    roles = {"a1": "user", "b1": "user", "a2": "assistant"}
    assert sorted(m.message_id for m in store.written) == ["a1", "a2", "b1"]
    for m in store.written:  # the vectors went back to their own messages
        assert m.texts == message_passages(m.content, roles[m.message_id])
        assert m.vectors == [embedder.vector(t) for t in m.texts]


def test_a_text_the_sleep_embedded_is_not_run_again_for_the_same_namespace_only() -> None:
    model, encoder = MiniLMEmbedder(), CountingEncoder()
    model._model = encoder  # type: ignore[assignment]  # the runtime's seam: encode(texts)
    turn = "I adopted a grey cat called Miso last week."
    with cache_scope("alice"):  # what a sleep of alice embeds (its turn leads)
        fresh = model.embed([turn])
    store = FakePassages([
        PendingMessage("alice", "a1", "user", turn),
        PendingMessage("bob", "b1", "user", turn),
    ])  # fmt: skip
    indexer = PassageIndexer(store, model)
    assert indexer.run("alice") == 1
    assert encoder.asked == [turn]  # alice's passage read her sleep's vector
    assert store.written[0].texts == [turn] and store.written[0].vectors == fresh
    assert indexer.run("bob") == 1
    assert store.written[1].vectors == fresh  # the same vector for bob, but computed for him
    assert encoder.asked == [turn, turn]


def test_the_best_topics_passages_join_the_nearest_once_a_message() -> None:
    near = [_hit("a", 0.9, ("a1",)), _hit("b", 0.7, ("b1",))]
    scoped = [_hit("b", 0.8, ("b2",)), _hit("c", 0.6, ("c1",)), _hit("a", 0.5, ("a2",))]
    merged = with_scoped(near, scoped)
    assert [h.message.message_id for h in merged] == ["a", "b", "c"]
    by_id = {h.message.message_id: h for h in merged}
    assert by_id["a"].score == 0.9 and by_id["a"].passages == ("a1", "a2")
    assert by_id["b"].score == 0.8 and by_id["b"].passages == ("b2", "b1")  # best first
    assert by_id["c"].passages == ("c1",)
    assert with_scoped(near, []) == near and with_scoped([], scoped[:1]) == scoped[:1]
