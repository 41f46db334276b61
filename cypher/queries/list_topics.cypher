// Live topics of a namespace, most useful first (export, analytics).
// params: $namespace, $limit   returns: t (map, no embedding)
MATCH (t:Topic {namespace: $namespace})
WHERE t.archived_at IS NULL
RETURN t {.*, embedding: null} AS t
ORDER BY t.utility_score DESC, t.last_seen_at DESC
LIMIT $limit
