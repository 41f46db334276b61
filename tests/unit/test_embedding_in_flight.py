"""Two threads of one process never run the model on the same text of a namespace at once
(``retrieval.embedding.InFlight``): the second waits for the first's vector, and two threads
asking for the same texts split them. The passage writer uses it to embed the next sleep's
leads ahead (``retrieval.passage_index.Leads``). Threads are paced by events, not by time."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest

from graph.errors import EmbeddingUnavailable
from graph.models import Message
from graph.passages import PendingMessage
from retrieval.embedding import CLAIM, MiniLMEmbedder, cache_scope
from retrieval.passage_index import Leads, PassageIndexer
from sleepwake.config import DEFAULT
from sleepwake.segments import embedded_lead, turn_text
from tests.fakes.passages import FakePassages
from tests.unit.test_vector_cache_scope import CountingEncoder
from text.passages import message_passages

AT = Message(message_id="x", namespace="ns", role="user", content="x", at="2026-03-02T09:00:00Z").at


class GatedEncoder(CountingEncoder):
    """A ``CountingEncoder`` whose first call stops inside the model until ``go`` is set, so a
    second thread can ask while it runs; ``failing`` makes that first call raise."""

    def __init__(self, failing: bool = False) -> None:
        super().__init__()
        self.inside, self.go, self.failing, self.calls = (
            threading.Event(),
            threading.Event(),
            failing,
            0,
        )
        self.lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        with self.lock:
            self.calls += 1
            first = self.calls == 1
        if first:
            self.inside.set()
            assert self.go.wait(10), "the test never let the first call finish"
            if self.failing:
                raise EmbeddingUnavailable("the model broke")
        return super().encode(texts)


def _model(encoder: CountingEncoder) -> MiniLMEmbedder:
    model = MiniLMEmbedder()
    model._model = encoder  # type: ignore[assignment]  # the runtime's seam: encode(texts)
    return model


def _in_thread(
    model: MiniLMEmbedder, scope: str, texts: list[str], out: dict[str, object]
) -> threading.Thread:
    def run() -> None:
        with cache_scope(scope):
            try:
                out["vectors"] = model.embed(texts)
            except EmbeddingUnavailable as exc:
                out["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_a_text_being_embedded_is_waited_for_not_embedded_again() -> None:
    encoder = GatedEncoder()
    model = _model(encoder)
    first: dict[str, object] = {}
    thread = _in_thread(model, "alice", ["the kayak trip"], first)
    assert encoder.inside.wait(10)
    second: dict[str, object] = {}
    waiter = _in_thread(model, "alice", ["the kayak trip", "a new text"], second)
    # the waiter embeds its own new text meanwhile, then waits for the kayak trip
    while "a new text" not in encoder.asked:
        waiter.join(0.01)
    encoder.go.set()
    thread.join(10)
    waiter.join(10)
    assert encoder.asked.count("the kayak trip") == 1
    assert second["vectors"] == [first["vectors"][0], model.embed(["a new text"])[0]]  # type: ignore[index]


def test_another_namespace_never_waits_for_a_text_in_flight() -> None:
    encoder = GatedEncoder()
    model = _model(encoder)
    first: dict[str, object] = {}
    thread = _in_thread(model, "alice", ["the kayak trip"], first)
    assert encoder.inside.wait(10)
    with cache_scope("bob"):
        bobs = model.embed(["the kayak trip"])  # runs now, while alice's call is held
    assert encoder.asked == ["the kayak trip"]  # bob's (alice's is still inside the model)
    encoder.go.set()
    thread.join(10)
    assert encoder.asked == ["the kayak trip"] * 2
    assert first["vectors"] == bobs


def test_a_failed_claim_leaves_the_waiter_to_embed_the_text_itself() -> None:
    encoder = GatedEncoder(failing=True)
    model = _model(encoder)
    first: dict[str, object] = {}
    thread = _in_thread(model, "alice", ["the kayak trip"], first)
    assert encoder.inside.wait(10)
    second: dict[str, object] = {}
    waiter = _in_thread(model, "alice", ["the kayak trip"], second)
    encoder.go.set()
    thread.join(10)
    waiter.join(10)
    assert isinstance(first["error"], EmbeddingUnavailable)
    assert second["vectors"] == [[14.0, 1.0]]  # computed by the waiter: len("the kayak trip")
    assert not model.in_flight._events  # no claim outlives its call


def test_two_threads_asking_for_the_same_texts_split_them() -> None:
    encoder = GatedEncoder()
    model = _model(encoder)
    texts = [f"turn {i:03d} of the slice" for i in range(3 * CLAIM)]
    first: dict[str, object] = {}
    thread = _in_thread(model, "alice", texts, first)
    assert encoder.inside.wait(10)  # holds its first CLAIM texts
    second: dict[str, object] = {}
    helper = _in_thread(model, "alice", texts, second)
    helper.join(0.05)
    encoder.go.set()
    thread.join(10)
    helper.join(10)
    assert sorted(encoder.asked) == sorted(texts)  # each text through the model once
    assert first["vectors"] == second["vectors"]
    assert len(encoder.asked) == len(set(encoder.asked))


def test_the_leads_are_the_texts_the_sleep_embeds_and_a_long_answer_has_none() -> None:
    cfg = DEFAULT.formation
    user = Message(message_id="u", namespace="ns", role="user", content="I  moved to Denver. " * 60,
                   at=AT, speaker="Ana")  # fmt: skip
    short = Message(message_id="a", namespace="ns", role="assistant", content="Which part?", at=AT)
    long = short.model_copy(update={"content": "Denver is a fine city. " * 100})
    for m in (user, short):
        assert embedded_lead(m.role, m.speaker, m.content, cfg) == turn_text(m, cfg)
    assert embedded_lead(long.role, long.speaker, long.content, cfg) is None


def test_the_passage_writer_embeds_the_leads_first_with_the_sleep_s_embedder() -> None:
    sleep_encoder, passage_encoder = CountingEncoder(), CountingEncoder()
    sleeps, passages = _model(sleep_encoder), _model(passage_encoder)
    pending = [
        PendingMessage("alice", "a1", "user", "I adopted a cat. Her name is Miso.", "Alice"),
        PendingMessage("alice", "a2", "assistant", "What a lovely name! " * 80),  # a long answer
    ]
    leads = Leads(sleeps, lambda m: embedded_lead(m.role, m.speaker, m.content))
    store = FakePassages(list(pending))
    assert PassageIndexer(store, passages, leads=leads).run("alice") == 2
    lead = "Alice: I adopted a cat. Her name is Miso."
    assert sleep_encoder.asked == [lead]  # the long answer takes its question's vector
    cut = message_passages(pending[0].content, "user") + message_passages(
        pending[1].content, "assistant"
    )
    assert passage_encoder.asked == list(dict.fromkeys(cut))  # one call, repeats once
    with cache_scope("alice"):  # the sleep reads the lead's vector without the model
        sleeps.embed([lead])
    assert sleep_encoder.asked == [lead]
    with cache_scope("bob"):
        sleeps.embed([lead])
    assert sleep_encoder.asked == [lead, lead]


def test_a_lead_that_cannot_be_embedded_does_not_stop_the_passages() -> None:
    class Broken(CountingEncoder):
        def encode(self, texts: Sequence[str]) -> np.ndarray:
            raise EmbeddingUnavailable("down")

    store = FakePassages([PendingMessage("alice", "a1", "user", "I adopted a cat named Miso.")])
    leads = Leads(_model(Broken()), lambda m: m.content)
    encoder = CountingEncoder()
    assert PassageIndexer(store, _model(encoder), leads=leads).run("alice") == 1
    assert encoder.asked == ["I adopted a cat named Miso."]


@pytest.mark.parametrize(
    ("embedder", "runtime", "int8"),
    [("minilm", "onnx-int8", True), ("minilm", "same", False), ("openai", "onnx-int8", False)],
)
def test_passages_are_embedded_by_the_int8_graph_of_minilm_by_default(
    embedder: str, runtime: str, int8: bool
) -> None:
    from api.container import Container
    from api.settings import Settings

    settings = Settings(embedder=embedder, passage_embedding_runtime=runtime, openai_api_key="k")
    container = Container(settings)
    got = container.passage_embedder
    assert (got is not container.embedder) == int8
    if int8:
        assert got.model_name.endswith("#int8")
