"""`sheriff eval topics`: the shape of the topic layer (docs EVALUATION.md §4).

Per LoCoMo conversation, in a fresh namespace: the replay of ``eval locomo`` (production sleep
policy, the session dates as the clock, maintenance a day later), then one explicit sleep; then
the figures over the live topics and the messages of the namespace. ``topic_rows`` lists the
topics themselves (name, first/last seen, messages, facts), because figures alone do not show
whether a topic is one a person would name.
"""

from __future__ import annotations

import math
import re
import time
import uuid
from collections import Counter
from datetime import datetime
from typing import Any

import numpy as np

from api.container import Container
from api.eval_durability import durability_figures
from api.eval_locomo import normalise_evidence, replay_end, require_kept
from graph.models import Fact, Topic, TopicEvent
from sleepwake.replay import locomo_sessions

NEAR_DUPLICATE = 0.9
OBSERVATION_COSINE = 0.35
TOPIC_K = 8
BUDGET = 1000


def name_key(name: str) -> str:
    """How duplicate names are compared: lower case, no punctuation, no plural "s"."""
    words = re.sub(r"[^\w\s]", " ", name.lower()).split()
    return " ".join(w[:-1] if w.endswith("s") and len(w) > 3 else w for w in words)


def evaluate_topics(
    container: Container,
    sample: dict[str, Any],
    keep: bool = False,
    rows: bool = False,
    reuse: str | None = None,
) -> dict[str, Any]:
    """Replay one conversation, sleep once more, and measure its topics (§4). ``reuse``: the
    namespace an earlier ``--keep`` run left for this conversation, measured again without the
    replay (the same topics: a retrieval change on the same memory)."""
    ns = reuse or f"evaltopics-{sample['sample_id']}-{uuid.uuid4().hex[:6]}"
    started = time.perf_counter()
    try:
        if reuse:
            require_kept(container, ns)
            now = replay_end(sample)
        else:
            now = _replay(container, sample, ns)
        wall = time.perf_counter() - started
        topics = container.topics.list_live(ns, limit=100_000)
        messages = container.messages.tail(ns, 1_000_000)
        external = {m.message_id: m.external_id or m.message_id for m in messages}
        report = {"sample_id": sample["sample_id"], "namespace": ns, "messages": len(messages)}
        report.update(shape_figures(topics, len(messages), external))
        events = _events_by_topic(container, ns, topics)
        report.update(durability_figures(topics, events, external, sample["qa"]))
        report["near_duplicate_pairs"] = near_duplicates(container, topics)
        report["observation_coverage"] = observation_coverage(container, sample, topics, external)
        by_id = {t.topic_id: t for t in topics}
        report["topic_only_recall_1000"] = topic_only_recall(
            container, sample, ns, now, external, by_id
        )
        if not reuse:
            report["ingest_and_sleep_s"] = round(wall, 1)
        if rows:
            report["topic_list"] = topic_rows(topics, external, events)  # "topics" stays the count
        return report
    finally:
        if not keep:
            from api.eval_locomo import _drop

            _drop(container, ns)


def _replay(container: Container, sample: dict[str, Any], ns: str) -> datetime:
    for _, messages in locomo_sessions(sample):
        container.conversation.append(ns, messages)
    now = replay_end(sample)
    container.conversation.maintain(ns, now)
    container.sleeper.sleep(ns, now)  # the one explicit sleep of §4
    container.passage_indexer.run(ns)  # the passages' vectors, as the sleep worker writes them
    return now


def _events_by_topic(
    container: Container, ns: str, topics: list[Topic]
) -> dict[str, list[TopicEvent]]:
    out: dict[str, list[TopicEvent]] = {t.topic_id: [] for t in topics}
    ids = list(out)
    for i in range(0, len(ids), 500):
        for event in container.services.topics.events_of(ns, ids[i : i + 500]):
            out.setdefault(event.topic_id, []).append(event)
    return out


def _cited(topic: Topic) -> set[str]:
    return {m for f in topic.facts for m in f.source_message_ids}


def shape_figures(topics: list[Topic], messages: int, external: dict[str, str]) -> dict[str, Any]:
    """Counts, singletons, duplicate names, facts per message and question facts."""
    facts = [f for t in topics for f in t.facts]
    names = Counter(name_key(t.name) for t in topics)
    return {
        "topics": len(topics),
        "topics_per_100_messages": round(100 * len(topics) / max(messages, 1), 1),
        "singleton_share": round(
            sum(1 for t in topics if len(_cited(t)) <= 1) / max(len(topics), 1), 3
        ),
        "duplicate_names": sum(n - 1 for n in names.values() if n > 1),
        "facts_per_message": round(len(facts) / max(messages, 1), 2),
        "question_facts": round(
            sum(1 for f in facts if f.text.rstrip().endswith("?")) / max(len(facts), 1), 3
        ),
    }


def _header(topic: Topic) -> str:
    return f"{topic.name}: {topic.one_liner}"


def _unit(container: Container, texts: list[str]) -> np.ndarray:
    if not texts:
        return np.zeros((0, 1))
    return np.asarray(container.embedder.embed(texts), dtype=np.float64)


def near_duplicates(container: Container, topics: list[Topic]) -> int:
    """Pairs of topics whose embedded "name: one-liner" have cosine >= 0.9."""
    vectors = _unit(container, [_header(t) for t in topics])
    if len(topics) < 2:
        return 0
    sims = np.triu(vectors @ vectors.T, k=1)
    return int((sims >= NEAR_DUPLICATE).sum())


def observation_coverage(
    container: Container, sample: dict[str, Any], topics: list[Topic], external: dict[str, str]
) -> float:
    """Share of gold observations with a topic that has a fact citing an evidence turn and whose
    "name: one-liner" has cosine >= 0.35 with the observation."""
    observations = [
        (str(text), set(normalise_evidence([evidence])))
        for per_session in sample.get("observation", {}).values()
        for per_speaker in per_session.values()
        for text, evidence in per_speaker
    ]
    if not observations or not topics:
        return 0.0
    heads = _unit(container, [_header(t) for t in topics])
    obs = _unit(container, [text for text, _ in observations])
    sims = obs @ heads.T
    cites = [{external.get(m, m) for m in _cited(t)} for t in topics]
    covered = sum(
        1
        for i, (_, evidence) in enumerate(observations)
        if any(evidence & cites[j] and sims[i, j] >= OBSERVATION_COSINE for j in range(len(topics)))
    )
    return round(covered / len(observations), 3)


def topic_only_recall(
    container: Container,
    sample: dict[str, Any],
    ns: str,
    now: datetime,
    external: dict[str, str],
    by_id: dict[str, Topic],
) -> float:
    """§1's evidence recall (categories 1-4) with a context of topics only: topic search k=8,
    each topic's "name: one-liner" then its facts best-first (cosine to the question, then
    newest), packed to 1000 tokens; sources are the turns the packed facts cite."""
    recalls = []
    for qa in sample["qa"]:
        evidence = set(normalise_evidence(qa.get("evidence", [])))
        if not evidence or int(qa["category"]) not in (1, 2, 3, 4):
            continue
        # as REST and the agent search: the question's own date is a preference (its window)
        found = container.services.topics.search(ns, str(qa["question"]), now, TOPIC_K, None)
        hits = found.result.hits
        whole = [
            by_id[h.topic.topic_id] for h in hits if h.topic.topic_id in by_id
        ]  # search is light
        cited = _pack(container, str(qa["question"]), whole, external)
        recalls.append(len(evidence & cited) / len(evidence))
    return round(sum(recalls) / len(recalls), 3) if recalls else 0.0


def _tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _pack(
    container: Container, question: str, topics: list[Topic], external: dict[str, str]
) -> set[str]:
    used, cited = 0, set[str]()
    query = _unit(container, [question])[0]
    for topic in topics:
        used += _tokens(_header(topic))
        if used > BUDGET:
            break
        for fact in _best_first(container, query, [f for f in topic.facts if f.invalid_at is None]):
            cost = _tokens(fact.text)
            if used + cost > BUDGET:
                return cited
            used += cost
            cited |= {external.get(m, m) for m in fact.source_message_ids}
    return cited


_FACT_VECTORS: dict[str, np.ndarray] = {}  # fact text -> vector, across the questions of a run


def _best_first(container: Container, query: np.ndarray, facts: list[Fact]) -> list[Fact]:
    """Facts by cosine to the question, then newest first."""
    missing = list(dict.fromkeys(f.text for f in facts if f.text not in _FACT_VECTORS))
    for text, vector in zip(missing, _unit(container, missing), strict=True):
        _FACT_VECTORS[text] = vector
    return sorted(
        facts,
        key=lambda f: (-float(_FACT_VECTORS[f.text] @ query), -(f.at.timestamp() if f.at else 0)),
    )


def topic_rows(
    topics: list[Topic], external: dict[str, str], events: dict[str, list[TopicEvent]]
) -> list[dict[str, Any]]:
    """One row per topic, oldest first: name, first/last seen, messages cited, sleeps that
    touched it (events at distinct times), the sessions its facts cite, facts."""
    rows = [
        {
            "name": t.name,
            "first_seen": t.time.first_seen_at.date().isoformat(),
            "last_seen": t.time.last_seen_at.date().isoformat(),
            "messages": len(_cited(t)),
            "facts": len(t.facts),
            "sleeps": len({e.at for e in events.get(t.topic_id, [])}),
            "sessions": len({external.get(m, m).split(":")[0] for m in _cited(t)}),
            "aliases": t.aliases[:6],
            "one_liner": t.one_liner[:120],
        }
        for t in topics
    ]
    return sorted(rows, key=lambda r: (r["first_seen"], r["name"]))
