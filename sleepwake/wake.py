"""The wake pipeline (spec §4.3): load the packet, decide whether to resume, and retrieve.

1 load tail and slept_at  2 resume if the task was running and the packet is fresh, else say it
is stale and offer a re-plan  3 light retrieval from message + resume hint + subject hints
4 deep retrieval (time window + 1-hop expansion) when the message has a time phrase
5 recent skill refs (2-5).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel

from graph.clock import ensure_utc
from graph.models import TailTurn, Topic, WakePacket
from graph.protocols import MessageStoreProtocol, SleepStoreProtocol
from retrieval.facts import rank_facts
from retrieval.search import TopicSearch
from retrieval.snippets import terms
from sleepwake.policy import SleepPolicy
from text.timephrases import SleepHistory, resolve


class ResumePlan(BaseModel):
    action: Literal["resume", "confirm", "none"]
    goal: str = ""
    next_step: str = ""
    topic_id: str | None = None
    slept_for_seconds: float | None = None
    reason: str = ""


class WokenTopic(BaseModel):
    topic_id: str
    name: str
    one_liner: str
    first_seen_at: datetime
    last_seen_at: datetime
    score: float
    reason: str
    source_message_ids: list[str]


class WakeResult(BaseModel):
    packet: WakePacket | None
    resume: ResumePlan
    topics: list[WokenTopic]
    skills: list[str]
    conversation_tail: list[TailTurn]
    time_window: dict[str, str | None] | None = None
    deep: bool = False


class Waker:
    def __init__(
        self,
        store: SleepStoreProtocol,
        messages: MessageStoreProtocol,
        search: TopicSearch,
        policy: SleepPolicy | None = None,
        tz: str = "UTC",
    ) -> None:
        self.store = store
        self.messages = messages
        self.search = search
        self.policy = policy or SleepPolicy()
        self.tz = tz

    def wake(self, namespace: str, message: str, now: datetime, k: int = 8) -> WakeResult:
        now = ensure_utc(now)
        packets = self.store.wake_packets(namespace, limit=2)
        packet = packets[0] if packets else None
        resume = resume_plan(packet, now, self.policy)
        history = SleepHistory(
            slept_at=packet.slept_at if packet else None,
            previous_session_end=_previous_end(packet),
        )
        window = resolve(message, now, self.tz, history)
        query = " ".join(
            part
            for part in (
                message,
                resume.goal,
                resume.next_step,
                *(packet.active_subject_hints if packet else []),
            )
            if part
        )
        hits = self.search.search(
            namespace, query, now, k=k, window=window, expand=window is not None
        )
        full = {
            t.topic_id: t
            for t in self.search.topics.get(namespace, [h.topic.topic_id for h in hits])
        }
        tail = packet.conversation_tail if packet else _tail(self.messages, namespace, self.policy)
        return WakeResult(
            packet=packet,
            resume=resume,
            topics=[
                _woken(full.get(h.topic.topic_id, h.topic), h.score, h.reason, terms(query))
                for h in hits
            ],
            skills=(packet.recent_skill_refs if packet else [])[:5],
            conversation_tail=tail,
            time_window=window.as_dict() if window else None,
            deep=window is not None,
        )


def resume_plan(packet: WakePacket | None, now: datetime, policy: SleepPolicy) -> ResumePlan:
    """Resume a running task when the packet is fresh; when stale, ask to confirm or re-plan."""
    if packet is None or packet.in_progress.status != "running":
        return ResumePlan(action="none", reason="no task was in progress")
    goal, _, next_step = packet.in_progress.resume_hint.partition("; next step: ")
    age = (now - packet.slept_at).total_seconds()
    base = {
        "goal": goal,
        "next_step": next_step,
        "topic_id": packet.in_progress.topic_id,
        "slept_for_seconds": age,
    }
    if age <= policy.fresh_window.total_seconds():
        return ResumePlan(action="resume", reason="task was running and the sleep is fresh", **base)
    hours = age / 3600
    return ResumePlan(
        action="confirm",
        reason=f"stale: slept {hours:.1f} h ago (fresh window "
        f"{policy.fresh_window.total_seconds() / 3600:.1f} h); confirm the goal or re-plan",
        **base,
    )


def _woken(topic: Topic, score: float, reason: str, qterms: frozenset[str]) -> WokenTopic:
    """A woken topic citing the messages of its facts best for the wake query first (relevance,
    then recency), so a large topic's first 50 ids are not its oldest."""
    ranked = rank_facts(topic.current().facts, qterms)
    ids = list(dict.fromkeys(m for f in ranked for m in f.source_message_ids))
    return WokenTopic(
        topic_id=topic.topic_id,
        name=topic.name,
        one_liner=topic.one_liner,
        first_seen_at=topic.time.first_seen_at,
        last_seen_at=topic.time.last_seen_at,
        score=score,
        reason=reason,
        source_message_ids=ids[:50],
    )


def _previous_end(packet: WakePacket | None) -> datetime | None:
    if packet is None or not packet.conversation_tail:
        return packet.slept_at if packet else None
    last = packet.conversation_tail[-1].at
    return last or packet.slept_at


def _tail(messages: MessageStoreProtocol, namespace: str, policy: SleepPolicy) -> list[TailTurn]:
    return [
        TailTurn(role=m.role, content=m.content, at=m.at, message_id=m.message_id)
        for m in messages.tail(namespace, policy.tail_turns)
    ]
