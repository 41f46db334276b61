"""Sleep steps 6 and 8: the edges between the sleep's topics, its subjects and its wake packet.
Pure (no store). The numbers: ``UtilityConfig`` (sleepwake/config.py)."""

from __future__ import annotations

import itertools
from datetime import datetime

from graph.models import EdgeType, InProgress, Message, Subject, TailTurn, WakePacket
from graph.topics import LinkRequest
from sleepwake.candidates import SliceCandidates
from sleepwake.config import SleepConfig
from sleepwake.extract import InProgress as ExtractedProgress
from sleepwake.extract import find_in_progress
from sleepwake.matching import alias_score
from sleepwake.merge_plan import Work, pool_of, slice_id_of
from sleepwake.normalise import stable_id
from sleepwake.subjects import SubjectHint
from sleepwake.tiers import recency


def edges(
    cands: SliceCandidates, subjects: list[SubjectHint], work: Work, cfg: SleepConfig
) -> list[LinkRequest]:
    """RELATES_TO between topics named in one message, DEPENDS_ON for a stated dependency,
    NEXT / PREV along each subject in order of first mention."""
    weights: dict[tuple[str, str, EdgeType], float] = {}

    def add(a: str, b: str, etype: EdgeType, delta: float, cap: float | None = None) -> None:
        if a == b:
            return
        key = (a, b, etype)
        weights[key] = min(cap or float("inf"), weights.get(key, 0.0) + delta)

    u = cfg.utility
    for keys in cands.per_message.values():
        named = keys[: u.linked_per_message]
        ids = list(dict.fromkeys(work.by_key[k] for k in named if k in work.by_key))
        for i, a in enumerate(ids):
            for b in ids[i + 1 :]:
                x, y = sorted((a, b))
                add(x, y, EdgeType.RELATES_TO, u.co_activation, u.max_co_activation)
    for dependent, dependency in cands.dependencies:
        src, dst = _find(dependent, work.by_key), _find(dependency, work.by_key)
        if src and dst:
            add(src, dst, EdgeType.DEPENDS_ON, 1.0)
    for subject in subjects:
        ids = list(dict.fromkeys(work.by_key[k] for k in _by_first_seen(subject, cands)))
        for a, b in itertools.pairwise(ids):
            add(a, b, EdgeType.NEXT, 1.0, 1.0)
            add(b, a, EdgeType.PREV, 1.0, 1.0)
    return [LinkRequest(a, b, t, w) for (a, b, t), w in weights.items()]


def wake_packet(
    namespace: str,
    now: datetime,
    buffer: list[Message],
    piece: list[Message],
    cands: SliceCandidates,
    subjects: list[SubjectHint],
    work: Work,
    cfg: SleepConfig,
) -> WakePacket | None:
    """What the next wake reads first: the tail verbatim, the most useful topics (utility x
    recency x salience), the subjects, the skills run, the unfinished task."""
    if not buffer:
        return None
    tail = buffer[len(piece) :]
    return WakePacket(
        packet_id=stable_id(namespace, "wake", slice_id_of(namespace, buffer), now.isoformat()),
        namespace=namespace,
        slept_at=now,
        conversation_tail=[
            TailTurn(role=m.role, content=m.content, at=m.at, message_id=m.message_id) for m in tail
        ],
        active_subject_hints=[s.label for s in subjects[: cfg.utility.subject_hints]],
        top_topic_ids=_ranked(now, subjects, work, cfg)[: cfg.utility.top_topics],
        recent_skill_refs=_skill_refs(buffer),
        in_progress=_in_progress(cands, tail, work, cfg),
    )


def _ranked(now: datetime, subjects: list[SubjectHint], work: Work, cfg: SleepConfig) -> list[str]:
    """The read top topics and the sleep's own, most useful first."""
    salience = {work.by_key[k]: s.salience for s in subjects for k in s.keys if k in work.by_key}
    pool = {tid: (u, seen) for tid, u, seen in work.top}
    touched = set(work.by_key.values())
    pool.update(
        {
            tid: (t.stats.utility_score, t.time.last_seen_at)
            for tid, t in work.topics.items()
            if tid in touched
        }
    )
    tau = cfg.tiers.recency_tau
    return sorted(
        pool,
        key=lambda tid: (
            -(
                max(pool[tid][0], 0.1)
                * recency(pool[tid][1], now, tau)
                * (0.5 + salience.get(tid, 0.0))
            )
        ),
    )


def subject_rows(
    namespace: str, now: datetime, subjects: list[SubjectHint], work: Work, cfg: SleepConfig
) -> list[Subject]:
    """The sleep's subjects as stored, each touching its topics, until ``subject_ttl``."""
    return [
        Subject(
            subject_id=stable_id(namespace, "subject", now.isoformat(), s.label),
            namespace=namespace,
            label=s.label,
            salience=s.salience,
            created_at=now,
            expires_at=now + cfg.policy.subject_ttl,
            topic_ids=[work.by_key[k] for k in s.keys if k in work.by_key],
        )
        for s in subjects
    ]


def _find(phrase: str, by_key: dict[str, str]) -> str | None:
    """The topic of the candidate key that best matches a dependency phrase."""
    if phrase in by_key:
        return by_key[phrase]
    inside = [k for k in by_key if k and (k in phrase or phrase in k)]
    return by_key[max(inside, key=len)] if inside else None


def _by_first_seen(subject: SubjectHint, cands: SliceCandidates) -> list[str]:
    order = {c.key: (c.first_seq or 0) for c in cands.candidates}
    return sorted((k for k in subject.keys if k in order), key=lambda k: order[k])


def _skill_refs(messages: list[Message]) -> list[str]:
    refs: list[str] = []
    for m in reversed(messages):
        for call in m.tool_calls:
            name = str(call.get("name", ""))
            args = call.get("arguments") or call.get("args") or {}
            skill = args.get("skill_id") if isinstance(args, dict) else None
            if name in {"skills_run", "skills.run"} and skill:
                ref = f"skill:{skill}"
                if ref not in refs:
                    refs.append(ref)
    return refs[:5]


def _in_progress(
    cands: SliceCandidates, tail: list[Message], work: Work, cfg: SleepConfig
) -> InProgress:
    """The latest mid-task statement in the slice or the tail, as a resume hint."""
    latest = cands.in_progress
    for m in tail:
        if m.role == "user":
            found = find_in_progress(m.content)
            if found is not None:
                latest = (found, m)
    if latest is None:
        return InProgress()
    found, _message = latest
    hint = found.goal + (f"; next step: {found.next_step}" if found.next_step else "")
    return InProgress(
        status="running", resume_hint=hint[:1000], topic_id=_goal_topic(found, work, cfg)
    )


def _goal_topic(found: ExtractedProgress, work: Work, cfg: SleepConfig) -> str | None:
    """The topic the unfinished task is about: the best name/alias overlap with its goal."""
    goal = found.goal.lower()
    best: tuple[float, str] | None = None
    for tid, topic in work.topics.items():
        overlap = alias_score(goal, pool_of(topic).names, cfg.merge)
        if overlap > 0 and (best is None or overlap > best[0]):
            best = (overlap, tid)
    return best[1] if best else None
