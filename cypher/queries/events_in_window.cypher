// Topic events whose time falls in [$since, $until) (either bound may be null), oldest first.
// params: $namespace, $since, $until, $limit   returns: e (map, no embedding)
MATCH (e:TopicEvent {namespace: $namespace})
WHERE ($since IS NULL OR e.at >= $since) AND ($until IS NULL OR e.at < $until)
RETURN e {.*, embedding: null} AS e ORDER BY e.at LIMIT $limit
