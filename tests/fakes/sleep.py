"""In-memory ``SleepStoreProtocol``: the lease, the match pool and the one atomic commit of
``graph.sleep.SleepStore``, over the ``FakeGraph`` the other fakes read.

The commit does what the nine statements of ``graph.sleep._commit_tx`` do, in the same order,
inside one ``FakeGraph.transaction`` (a version conflict leaves nothing written). The match pool
is always the exact scan (``scan_topic_candidates.cypher``), which is what the real store runs
for namespaces up to ``EXACT_MATCH_MAX`` topics.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from graph.clock import ensure_utc
from graph.errors import AlreadyRunning, LeaseLost, ValidationFailed, VersionConflict
from graph.fulltext import name_query
from graph.mapping import update_props, wake_packet_from_props, wake_packet_props
from graph.models import Topic, WakeCheck, WakePacket, WakeState, edge_type
from graph.sleep import DecayParams, MatchFields, PoolHit, SleepCommit, SleepReads, TopicWrite
from graph.topics import check_vector
from tests.fakes.events import put_event
from tests.fakes.graph import FakeGraph, Lease, TopicNode, similarity
from tests.fakes.topics import FakeTopicStore, merge_edge, new_node


class FakeSleepStore:
    """The graph side of sleeps of every namespace in one ``FakeGraph``."""

    def __init__(self, graph: FakeGraph | None = None) -> None:
        self.graph = graph if graph is not None else FakeGraph()

    # -- lease ---------------------------------------------------------------------------------
    def acquire_lease(
        self, namespace: str, holder: str, now: datetime, expires_at: datetime
    ) -> None:
        """Take the lease unless another holder's has not expired (``AlreadyRunning``)."""
        now, expires_at = ensure_utc(now), ensure_utc(expires_at)
        with self.graph.lock:
            lease = self.graph.leases.get(namespace)
            live = lease is not None and (lease.expires_at is None or lease.expires_at >= now)
            if live and lease is not None and lease.holder not in (None, holder):
                raise AlreadyRunning(f"already sleeping: namespace {namespace} is being compacted")
            self.graph.leases[namespace] = Lease(holder, now, expires_at)

    def release_lease(self, namespace: str, holder: str) -> None:
        """Give the lease back; only its holder can."""
        with self.graph.lock:
            lease = self.graph.leases.get(namespace)
            if lease is not None and lease.holder == holder:
                lease.holder, lease.expires_at = None, None

    def renew_lease(self, namespace: str, holder: str, expires_at: datetime) -> bool:
        """Extend ``holder``'s lease; False when someone else holds it (or nobody)."""
        with self.graph.lock:
            lease = self.graph.leases.get(namespace)
            if lease is None or lease.holder != holder:
                return False
            lease.expires_at = ensure_utc(expires_at)
            return True

    # -- reads ---------------------------------------------------------------------------------
    def match_pool(
        self, namespace: str, rows: list[dict[str, Any]], k: int = 5, overfetch: int = 4
    ) -> list[PoolHit]:
        """Per row: the exact top ``k`` live topics by cosine, plus the live topics whose name
        or alias is one of the row's ``names`` (cosine 0 when such a topic has no vector)."""
        if not rows:
            return []
        for row in rows:  # the real store checks and annotates the rows in place
            row["vector"] = check_vector(row["vector"])
            row["lucene"] = name_query(namespace, row["names"])
        live = self.graph.live_topics(namespace)
        pool = [n for n in live if n.embedding is not None]
        hits: list[tuple[int, str, float]] = []
        for row in rows:
            scores = [(similarity(n.embedding or [], row["vector"]), n) for n in pool]
            scores.sort(key=lambda pair: -pair[0])
            best = {n.props["topic_id"]: s for s, n in scores[:k]}
            for node in live:
                if _named(node, row["names"]):
                    s = similarity(node.embedding, row["vector"]) if node.embedding else 0.5
                    tid = node.props["topic_id"]
                    best[tid] = max(s, best.get(tid, -1.0))
            hits.extend((row["idx"], tid, s) for tid, s in best.items())
        fields = self.match_fields(namespace, list(dict.fromkeys(tid for _, tid, _ in hits)))
        return [PoolHit(idx, fields[tid], 2.0 * s - 1.0) for idx, tid, s in hits if tid in fields]

    def match_fields(self, namespace: str, topic_ids: list[str]) -> dict[str, MatchFields]:
        """What sleep matching needs of some topics (the latest 50 fact texts)."""
        return {
            n.props["topic_id"]: MatchFields(
                topic_id=n.props["topic_id"],
                name=n.props["name"],
                aliases=tuple(n.props.get("aliases") or ()),
                one_liner=n.props.get("one_liner") or "",
                facts=tuple((n.props.get("facts") or [])[-50:]),
                first_seen_at=n.props["first_seen_at"],
                last_seen_at=n.props["last_seen_at"],
            )
            for n in self.graph.topic_nodes(namespace, topic_ids)
        }

    def sleep_reads(
        self, namespace: str, rows: list[dict[str, Any]], k: int = 5, top: int = 20
    ) -> SleepReads:
        """``match_pool`` and ``top_topic_scores`` together (one read in the real store)."""
        with self.graph.lock:
            return SleepReads(
                self.match_pool(namespace, rows, k), self.top_topic_scores(namespace, top)
            )

    def get_topics(self, namespace: str, topic_ids: list[str]) -> list[Topic]:
        """Whole topics by id (the ones a sleep will rewrite)."""
        return FakeTopicStore(self.graph).get(namespace, topic_ids) if topic_ids else []

    def state_topics(
        self, namespace: str, tokens: Sequence[str], limit: int = 50
    ) -> list[tuple[str, list[str]]]:
        """(topic_id, state tokens) of the live topics holding any of ``tokens``."""
        with self.graph.lock:
            return self.graph.state_topics(namespace, tokens, limit)

    def theme_names(self, namespace: str, prefixes: Sequence[str], limit: int = 500) -> list[str]:
        """``theme_names.cypher``: lower-cased names and aliases of live topics starting with
        one of ``prefixes`` or holding " (<prefix>", sorted, at most ``limit``."""
        wanted = {p.lower() for p in prefixes if p}
        with self.graph.lock:
            names = {
                name.lower()
                for n in self.graph.live_topics(namespace)
                for name in [n.props["name"], *(n.props.get("aliases") or ())]
                if any(name.lower().startswith(p) or f" ({p}" in name.lower() for p in wanted)
            }
        return sorted(names)[:limit]

    def topic_vectors(self, namespace: str, topic_ids: list[str]) -> dict[str, list[float]]:
        """The stored vectors of some topics, by id (a topic without one is left out)."""
        with self.graph.lock:
            return {
                n.props["topic_id"]: list(n.embedding)
                for n in self.graph.topic_nodes(namespace, topic_ids)
                if n.embedding is not None
            }

    def top_topic_scores(
        self, namespace: str, limit: int = 20
    ) -> list[tuple[str, float, datetime]]:
        """(topic_id, utility_score, last_seen_at) of the most useful live topics."""
        ranked = sorted(
            self.graph.live_topics(namespace),
            key=lambda n: (-n.props["utility_score"], -n.props["last_seen_at"].timestamp()),
        )
        return [
            (n.props["topic_id"], float(n.props["utility_score"]), n.props["last_seen_at"])
            for n in ranked[:limit]
        ]

    def wake_packets(self, namespace: str, limit: int = 2) -> list[WakePacket]:
        """The newest wake packets first."""
        mine = [p for p in self.graph.wake_packets.values() if p["namespace"] == namespace]
        mine.sort(key=lambda p: -p["slept_at"].timestamp())
        return [wake_packet_from_props(p) for p in mine[:limit]]

    def claim_wake(self, namespace: str, now: datetime, check: WakeCheck) -> WakeState | None:
        """Record a wake at ``now`` when one is due (the rules of ``claim_wake.cypher``)."""
        with self.graph.lock:
            state = self.graph.wake_states.get(namespace)
            reason = _wake_reason(state, check)
            if reason is None:
                return None
            woke = WakeState(
                woke_at=ensure_utc(now),
                packet_id=check.packet_id or (state.packet_id if state else None),
                reason=reason,
            )
            self.graph.wake_states[namespace] = woke
            return woke.model_copy(
                update={
                    "packet_id": check.packet_id,
                    "previous_woke_at": state.woke_at if state else None,
                    "previous_packet_id": state.packet_id if state else None,
                    "previous_reason": state.reason if state else None,
                }
            )

    def release_wake(self, namespace: str, state: WakeState) -> None:
        """Undo the claim ``state`` unless a later wake replaced it."""
        with self.graph.lock:
            now = self.graph.wake_states.get(namespace)
            if now is None or (now.woke_at, now.reason) != (state.woke_at, state.reason):
                return
            if state.previous_woke_at is None or state.previous_reason is None:
                # the claim was the first wake: the node stays, with nothing woken on
                self.graph.wake_states.pop(namespace)
                return
            self.graph.wake_states[namespace] = WakeState(
                woke_at=state.previous_woke_at,
                packet_id=state.previous_packet_id,
                reason=state.previous_reason,
            )

    def wake_state(self, namespace: str) -> WakeState | None:
        """When the namespace last woke; None before its first wake."""
        return self.graph.wake_states.get(namespace)

    # -- the commit ----------------------------------------------------------------------------
    def commit(self, plan: SleepCommit) -> None:
        """Write the whole sleep, all or nothing."""
        started = time.perf_counter()
        ns, now = plan.namespace, ensure_utc(plan.now)
        with self.graph.transaction():
            lease = self.graph.leases.get(ns)
            if plan.lease_holder is not None and (
                lease is None or lease.holder != plan.lease_holder
            ):
                raise LeaseLost(f"sleep of {ns}: the lease was taken over; nothing was written")
            if lease is not None and plan.lease_holder is not None and plan.release_lease:
                lease.holder, lease.expires_at = None, None  # rolled back with the rest
            self._write_topics(ns, plan.topics, now)
            for event, vector in plan.events:
                put_event(self.graph, event, check_vector(vector) if vector is not None else None)
                self._mention(ns, event.topic_id, event.source_message_ids)
            for link in plan.links:
                if len(self.graph.topic_nodes(ns, [link.from_id, link.to_id])) == 2:
                    merge_edge(
                        self.graph,
                        (link.from_id, link.to_id, edge_type(link.type)),
                        link.delta,
                        now,
                    )
            self._write_subjects(ns, plan, now)
            packet = plan.wake_packet
            if packet is not None and packet.packet_id not in self.graph.wake_packets:
                self.graph.wake_packets[packet.packet_id] = wake_packet_props(packet)
            if plan.decay is not None:
                self._decay(ns, now, plan.decay)
            self._compact(ns, plan.compacted_message_ids, now)
        plan.timings["tx_commit"] = (time.perf_counter() - started) * 1000

    def _write_topics(self, ns: str, writes: list[TopicWrite], now: datetime) -> None:
        """Creates, then compare-and-set updates (any stale version: ``VersionConflict``)."""
        for w in writes:
            if w.expected_version is None:
                if w.topic.topic_id in self.graph.topics:
                    raise ValidationFailed(f"topic {w.topic.topic_id} already exists")
                self.graph.topics[w.topic.topic_id] = new_node(w.topic, w.vector, now)
        updates = [w for w in writes if w.expected_version is not None]
        stale = [
            w.topic.topic_id
            for w in updates
            if [n.props["version"] for n in self.graph.topic_nodes(ns, [w.topic.topic_id])]
            != [w.expected_version]
        ]
        if stale:
            raise VersionConflict(f"topics changed during the sleep: {stale[:5]}")
        for w in updates:
            node = self.graph.topics[w.topic.topic_id]
            node.props.update(update_props(w.topic))
            node.props.update(version=(w.expected_version or 0) + 1, updated_at=now)
            if w.vector is not None:
                node.embedding = check_vector(w.vector)

    def _mention(self, ns: str, topic_id: str, message_ids: list[str]) -> None:
        """MENTIONED_IN from a topic to the messages of the namespace its facts came from."""
        if not self.graph.topic_nodes(ns, [topic_id]):
            return
        for mid in message_ids:
            message = self.graph.messages.get(mid)
            if message is not None and message.namespace == ns:
                self.graph.mentions.add((topic_id, mid))

    def _write_subjects(self, ns: str, plan: SleepCommit, now: datetime) -> None:
        """Expired subjects of the namespace go; new ones TOUCH the topics that exist."""
        if not plan.subjects:
            return
        for sid, (subject, _) in list(self.graph.subjects.items()):
            if subject.namespace == ns and subject.expires_at < now:
                del self.graph.subjects[sid]
        for subject in plan.subjects:
            kept, touched = self.graph.subjects.get(subject.subject_id, (subject, []))
            found = [n.props["topic_id"] for n in self.graph.topic_nodes(ns, subject.topic_ids)]
            self.graph.subjects[subject.subject_id] = (kept, list(dict.fromkeys(touched + found)))

    def _decay(self, ns: str, now: datetime, d: DecayParams) -> None:
        """``decay_topics.cypher``: utility decay since last decayed or seen, and the bucket."""
        for node in self.graph.live_topics(ns):
            p = node.props
            decayed_at = p.get("utility_decayed_at")
            if decayed_at is not None and decayed_at > now - timedelta(hours=d.min_hours):
                continue
            last_seen = p["last_seen_at"]
            since = last_seen if decayed_at is None or decayed_at < last_seen else decayed_at
            days, age = _days(since, now), _days(last_seen, now)
            utility = float(p["utility_score"])
            if not (days <= 0 or p.get("open_loops") or (p.get("constraint_count") or 0) > 0):
                utility *= d.per_day**days
            p["utility_score"], p["version"] = utility, p["version"] + 1
            p["utility_decayed_at"] = now if now > last_seen else last_seen
            p["decay_bucket"] = _bucket(age, utility, d)

    def _compact(self, ns: str, message_ids: list[str], now: datetime) -> None:
        for mid in message_ids:
            m = self.graph.messages.get(mid)
            if m is not None and m.namespace == ns and m.compacted_at is None:
                self.graph.messages[mid] = m.model_copy(update={"compacted_at": now})


def _named(node: TopicNode, names: list[str]) -> bool:
    return node.props["name_lc"] in names or any(a in names for a in node.props["aliases_lc"])


def _days(start: datetime, end: datetime) -> float:
    """Whole seconds between two times, in days (``duration.inSeconds(...).seconds``)."""
    return math.floor((end - start).total_seconds()) / 86400.0


def _bucket(age: float, utility: float, d: DecayParams) -> str:
    if age <= d.hot_days or utility >= d.hot_utility:
        return "hot"
    return "warm" if age <= d.warm_days or utility >= d.warm_utility else "cold"


def _wake_reason(state: WakeState | None, check: WakeCheck) -> Any:
    """Why a wake is due now (None: it is not), as ``claim_wake.cypher`` decides."""
    woke_at = state.woke_at if state else None
    if check.force:
        return "explicit"
    if (
        check.packet_id is not None
        and (state.packet_id if state else None) != check.packet_id
        and (woke_at is None or (check.slept_at is not None and check.slept_at >= woke_at))
    ):
        return "sleep"
    if (
        check.last_turn_at is not None
        and check.silent_before is not None
        and check.last_turn_at <= check.silent_before
        and (woke_at is None or woke_at <= check.last_turn_at)
    ):
        return "silence"
    return None
