// Topic events whose time falls in [$since, $until), oldest first. The store passes both bounds
// (a date before / after every event when the window has none) so the planner seeks the
// (namespace, at) index: "$since IS NULL OR e.at >= $since" made it scan every TopicEvent of
// every namespace (9,890 rows, ~2 s on a busy machine, at 100k topics).
// params: $namespace, $since: datetime, $until: datetime, $limit   returns: e (map, no embedding)
MATCH (e:TopicEvent)
WHERE e.namespace = $namespace AND e.at >= $since AND e.at < $until
RETURN e {.*, embedding: null} AS e ORDER BY e.at LIMIT $limit
