"""The wake pipeline (spec §4.3): load the packet, decide whether to resume, and retrieve.

1 load tail and slept_at  2 resume if the task was running and the packet is fresh, else say it
is stale and offer a re-plan  3 light retrieval from message + resume hint + subject hints
4 deep retrieval (time window + 1-hop expansion) when the message has a time phrase
5 recent skill refs (2-5), as manifests when a skill lookup is wired in.

A wake is recorded in the graph (``SleepStore.claim_wake``): an explicit wake always, and the
awake loop's ``wake_if_due`` once per sleep (the newest packet not yet woken on) or after a long
silence. The claim is atomic, so API workers sharing a namespace wake it once, and it works the
same whether the sleep ran inline or in a background worker: it compares graph state only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from graph.clock import ensure_utc
from graph.models import (
    InProgress,
    Message,
    TailTurn,
    Topic,
    TopicSummary,
    WakeCheck,
    WakePacket,
    WakeState,
)
from graph.protocols import MessageStoreProtocol, SleepStoreProtocol
from retrieval.facts import rank_facts
from retrieval.search import TopicSearch
from retrieval.snippets import terms
from sleepwake.extract import find_in_progress
from sleepwake.policy import SleepPolicy
from text.timephrases import SleepHistory, resolve

# skill ids -> what the model sees of each (unknown ids left out); see skills/router.py
SkillManifests = Callable[[list[str]], list[dict[str, Any]]]
MAX_OPEN_LOOPS = 8
MAX_SKILLS = 5


class ResumePlan(BaseModel):
    action: Literal["resume", "confirm", "none"]
    goal: str = ""
    next_step: str = ""
    topic_id: str | None = None
    slept_for_seconds: float | None = None
    reason: str = ""


class WokenTopic(TopicSummary):
    reason: str
    source_message_ids: list[str]


class WokenLoop(BaseModel):
    """An open loop of one of the packet's top topics."""

    topic_id: str
    topic: str
    text: str
    at: datetime | None = None


class WakeResult(BaseModel):
    packet: WakePacket | None
    resume: ResumePlan
    topics: list[WokenTopic]
    skills: list[dict[str, Any]]  # manifests of the recent skills (2-5), newest first
    conversation_tail: list[TailTurn]
    time_window: dict[str, str | None] | None = None
    deep: bool = False
    top_topics: list[WokenTopic] = []  # the packet's top_topic_ids, in its order
    open_loops: list[WokenLoop] = []
    woke_at: datetime | None = None  # when recorded (None: a read-only wake)
    reason: Literal["sleep", "silence", "explicit"] | None = None
    claim: WakeState | None = Field(default=None, exclude=True)  # for ``Waker.release``


@dataclass(eq=False)
class Waker:
    store: SleepStoreProtocol
    messages: MessageStoreProtocol
    search: TopicSearch
    policy: SleepPolicy = field(default_factory=SleepPolicy)
    tz: str = "UTC"
    manifests: SkillManifests | None = None

    def wake(
        self, namespace: str, message: str, now: datetime, k: int = 8, record: bool = True
    ) -> WakeResult:
        """Wake now (explicitly): restore from the newest packet; ``record`` sets ``woke_at``."""
        now = ensure_utc(now)
        packets = self.store.wake_packets(namespace, limit=1)
        state = None
        if record:
            state = self.store.claim_wake(namespace, now, WakeCheck(force=True, **_ids(packets)))
        return self._restore(namespace, message, now, packets, state, k)

    def wake_if_due(
        self, namespace: str, message: str, now: datetime, k: int = 8
    ) -> WakeResult | None:
        """The awake loop's wake: once per sleep (a packet not yet woken on, written at or after
        the last wake) or after ``policy.wake_silence`` without a turn; None when not due."""
        now = ensure_utc(now)
        packets = self.store.wake_packets(namespace, limit=1)
        last = self.messages.tail(namespace, 1)
        check = WakeCheck(
            last_turn_at=last[0].at if last else None,
            silent_before=now - self.policy.wake_silence,
            **_ids(packets),
        )
        if wake_reason(self.store.wake_state(namespace), check) is None:
            return None  # most turns: one read, no write
        state = self.store.claim_wake(namespace, now, check)  # re-checked atomically
        if state is None:
            return None  # another worker woke it a moment ago
        return self._restore(namespace, message, now, packets, state, k)

    def release(self, namespace: str, woke: WakeResult) -> None:
        """Give a wake back when the turn that claimed it failed (the model was unreachable),
        so the next turn wakes instead; a no-op once a later wake has replaced it."""
        if woke.claim is not None:
            self.store.release_wake(namespace, woke.claim)

    def _restore(
        self,
        namespace: str,
        message: str,
        now: datetime,
        packets: list[WakePacket],
        state: WakeState | None,
        k: int,
    ) -> WakeResult:
        packet = packets[0] if packets else None
        tail = self._tail(namespace, packet, state)
        resume = self._resume(packet, tail, state, now)
        window = resolve(message, now, self.tz, _history(packet, state))
        hints = packet.active_subject_hints if packet else []
        query = " ".join(p for p in (message, resume.goal, resume.next_step, *hints) if p)
        hits = self.search.search(
            namespace, query, now, k=k, window=window, expand=window is not None
        )
        top_ids = packet.top_topic_ids if packet else []
        hit_ids = [h.topic.topic_id for h in hits]
        ids = list(dict.fromkeys([*hit_ids, *top_ids]))
        full = {t.topic_id: t for t in self.search.topics.get(namespace, ids)}
        top = [full[i] for i in top_ids if i in full]
        return WakeResult(
            packet=packet,
            resume=resume,
            topics=[
                _woken(full.get(h.topic.topic_id, h.topic), h.score, h.reason, terms(query))
                for h in hits
            ],
            skills=self._skills(packet),
            conversation_tail=tail,
            time_window=window.as_dict() if window else None,
            deep=window is not None,
            top_topics=[
                _woken(t, t.stats.utility_score, "top topic of the wake packet", terms(query))
                for t in top
            ],
            open_loops=_open_loops(top),
            woke_at=state.woke_at if state else None,
            reason=state.reason if state else None,
            claim=state,
        )

    def _tail(
        self, namespace: str, packet: WakePacket | None, state: WakeState | None
    ) -> list[TailTurn]:
        """The packet's tail after a sleep; the stored turns after a silence (they may be newer
        than the last packet) or when the namespace never slept."""
        if packet is not None and (state is None or state.reason != "silence"):
            return packet.conversation_tail
        return _tail(self.messages, namespace, self.policy)

    def _resume(
        self,
        packet: WakePacket | None,
        tail: list[TailTurn],
        state: WakeState | None,
        now: datetime,
    ) -> ResumePlan:
        """After a silence the latest mid-task statement of the tail counts (the packet may
        predate it), aged from that turn; otherwise the packet's, aged from its sleep."""
        if state is not None and state.reason == "silence":
            for turn in reversed(tail):
                found = find_in_progress(turn.content) if turn.role == "user" else None
                if found is not None and turn.at is not None:
                    hint = found.goal + (
                        f"; next step: {found.next_step}" if found.next_step else ""
                    )
                    progress = InProgress(status="running", resume_hint=hint[:1000])
                    return plan_for(progress, turn.at, now, self.policy)
        return resume_plan(packet, now, self.policy)

    def _skills(self, packet: WakePacket | None) -> list[dict[str, Any]]:
        refs = (packet.recent_skill_refs if packet else [])[:MAX_SKILLS]
        ids = [r.removeprefix("skill:") for r in refs]
        if self.manifests is None:
            return [{"skill_id": i} for i in ids]
        return self.manifests(ids)


def resume_plan(packet: WakePacket | None, now: datetime, policy: SleepPolicy) -> ResumePlan:
    """Resume a running task when the packet is fresh; when stale, ask to confirm or re-plan."""
    if packet is None:
        return ResumePlan(action="none", reason="no task was in progress")
    return plan_for(packet.in_progress, packet.slept_at, now, policy)


def plan_for(
    progress: InProgress, since: datetime, now: datetime, policy: SleepPolicy
) -> ResumePlan:
    """Resume ``progress`` when it was interrupted within the fresh window, else confirm."""
    if progress.status != "running":
        return ResumePlan(action="none", reason="no task was in progress")
    goal, _, next_step = progress.resume_hint.partition("; next step: ")
    age = (now - since).total_seconds()
    base = {
        "goal": goal,
        "next_step": next_step,
        "topic_id": progress.topic_id,
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


def wake_reason(state: WakeState | None, check: WakeCheck) -> str | None:
    """Why a wake is due (``claim_wake.cypher``'s rule, for a read before the write); None
    when it is not."""
    woke_at = state.woke_at if state else None
    if check.force:
        return "explicit"
    new_packet = check.packet_id is not None and check.packet_id != (
        state.packet_id if state else None
    )
    slept_since = woke_at is None or (check.slept_at is not None and check.slept_at >= woke_at)
    if new_packet and slept_since:
        return "sleep"
    last, before = check.last_turn_at, check.silent_before
    silent = last is not None and before is not None and last <= before
    if silent and (woke_at is None or (last is not None and woke_at <= last)):
        return "silence"
    return None


def _ids(packets: list[WakePacket]) -> dict[str, Any]:
    if not packets:
        return {}
    return {"packet_id": packets[0].packet_id, "slept_at": packets[0].slept_at}


def _open_loops(topics: list[Topic]) -> list[WokenLoop]:
    """The open loops of the top topics, newest first, at most ``MAX_OPEN_LOOPS``."""
    loops = [
        WokenLoop(topic_id=t.topic_id, topic=t.name, text=loop.text, at=loop.at)
        for t in topics
        for loop in t.open_loops
    ]
    loops.sort(key=lambda w: w.at.timestamp() if w.at else 0.0, reverse=True)
    return loops[:MAX_OPEN_LOOPS]


def _woken(topic: Topic, score: float, reason: str, qterms: frozenset[str]) -> WokenTopic:
    """A woken topic citing the messages of its facts best for the wake query first (relevance,
    then recency), so a large topic's first 50 ids are not its oldest."""
    ranked = rank_facts(topic.current().facts, qterms)
    ids = list(dict.fromkeys(m for f in ranked for m in f.source_message_ids))
    return WokenTopic.of(topic, score, reason=reason, source_message_ids=ids[:50])


def _history(packet: WakePacket | None, state: WakeState | None) -> SleepHistory:
    """The sleep times time phrases resolve against, "since you woke" included."""
    return SleepHistory(
        slept_at=packet.slept_at if packet else None,
        woke_at=state.woke_at if state else None,
        previous_session_end=_previous_end(packet),
    )


def _previous_end(packet: WakePacket | None) -> datetime | None:
    if packet is None or not packet.conversation_tail:
        return packet.slept_at if packet else None
    last = packet.conversation_tail[-1].at
    return last or packet.slept_at


def _tail(messages: MessageStoreProtocol, namespace: str, policy: SleepPolicy) -> list[TailTurn]:
    turns: list[Message] = messages.tail(namespace, policy.tail_turns)
    return [
        TailTurn(role=m.role, content=m.content, at=m.at, message_id=m.message_id) for m in turns
    ]
