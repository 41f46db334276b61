// Messages whose content contains a lower-cased needle, oldest first (a scan of the namespace:
// forget must find every copy, not the best-ranked few).
// params: $namespace, $needle (lower-cased, non-empty), $limit
// returns: m (map)
MATCH (m:Message {namespace: $namespace})
WHERE toLower(m.content) CONTAINS $needle
RETURN m {.*} AS m
ORDER BY m.seq
LIMIT $limit
