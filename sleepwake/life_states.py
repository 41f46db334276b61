"""Step 6, last, of a sleep: the states of a life its new facts claim close the earlier facts
that held another value, wherever they are filed (``sleepwake.supersede.supersede_states``).

A fact stating where the user lives is filed under whatever the turn was about, and the move
under another topic; so the topics holding a current claim of each key the slice's facts claim
are read through the ``topic_states`` index (``SleepStore.state_topics``), and those with a fact
closed join the sleep's work, written in its commit and guarded by the version they were read at.
"""

from __future__ import annotations

from collections.abc import Sequence

from graph.models import Message
from graph.protocols import SleepStoreProtocol
from sleepwake.config import FormationConfig
from sleepwake.merge_plan import Work
from sleepwake.supersede import state_keys, supersede_states
from text.claims import state_token


def close_changed_states(
    work: Work,
    store: SleepStoreProtocol,
    namespace: str,
    piece: Sequence[Message],
    formation: FormationConfig,
) -> None:
    """Close, in ``work``, the earlier facts of every state the facts of ``piece`` (the slice)
    change: the sleep's own topics and the others holding the state; each other topic with a
    fact closed is added to ``work`` with its version and its count of valid facts as read."""
    said = {m.message_id for m in piece}
    fresh = [
        f
        for topic in work.topics.values()
        for f in topic.facts
        if said.intersection(f.source_message_ids)
    ]
    keys = state_keys(fresh)
    if not keys:
        return
    tokens = sorted(state_token(k) for k in keys)
    held = [t for t, _ in store.state_topics(namespace, tokens) if t not in work.topics]
    others = store.get_topics(namespace, held) if held else []
    changed = supersede_states([*work.topics.values(), *others], formation)
    for topic in others:
        if topic.topic_id in changed:
            work.versions[topic.topic_id] = topic.version
            work.facts_before[topic.topic_id] = sum(f.invalid_at is None for f in topic.facts)
    work.topics.update(changed)
