// One page of a namespace's messages for export, in conversation order.
// params: $namespace, $after_seq: int (-1 for the first page), $limit: int
// returns: m (map)
MATCH (m:Message {namespace: $namespace})
WHERE m.seq > $after_seq
RETURN m {.*} AS m
ORDER BY m.seq
LIMIT $limit
