// Messages whose time falls in [$since, $until), oldest first. The store passes both bounds (a
// date before / after every message for an open end) so the planner seeks (namespace, at).
// params: $namespace, $since: datetime, $until: datetime, $limit   returns: m (map)
MATCH (m:Message)
WHERE m.namespace = $namespace AND m.at >= $since AND m.at < $until
RETURN m {.*} AS m ORDER BY m.seq LIMIT $limit
