// Messages whose time falls in [$since, $until), oldest first; either bound may be null.
// params: $namespace, $since, $until, $limit   returns: m (map)
MATCH (m:Message {namespace: $namespace})
WHERE ($since IS NULL OR m.at >= $since) AND ($until IS NULL OR m.at < $until)
RETURN m {.*} AS m ORDER BY m.seq LIMIT $limit
