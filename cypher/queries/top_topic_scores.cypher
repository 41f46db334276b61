// The namespace's most useful live topics, ids and ranking fields only (wake packet ranking).
// params: $namespace, $limit   returns: topic_id, utility_score, last_seen_at
MATCH (t:Topic {namespace: $namespace})
WHERE t.archived_at IS NULL
RETURN t.topic_id AS topic_id, t.utility_score AS utility_score, t.last_seen_at AS last_seen_at
ORDER BY t.utility_score DESC, t.last_seen_at DESC
LIMIT $limit
