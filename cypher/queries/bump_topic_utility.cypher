// Add utility to topics used by a successful skill run (spec §8.3: +2). Writing a lock
// property first takes each node's write lock, so concurrent bumps and versioned updates
// serialise; the version moves so optimistic writers re-read.
// params: $namespace, $topic_ids: list<string>, $delta: float, $now: datetime
// returns: topic_id, utility_score, version
UNWIND $topic_ids AS id
MATCH (t:Topic {topic_id: id, namespace: $namespace})
SET t._lock = true
REMOVE t._lock
WITH t
SET t.utility_score = coalesce(t.utility_score, 0) + $delta,
    t.usage_count = coalesce(t.usage_count, 0) + 1,
    t.last_used_at = $now,
    t.version = t.version + 1
RETURN t.topic_id AS topic_id, t.utility_score AS utility_score, t.version AS version
