// Messages of a namespace by the caller's external ids, oldest first.
// params: $namespace, $external_ids: list<string>
// returns: m (map)
MATCH (m:Message {namespace: $namespace})
WHERE m.external_id IN $external_ids
RETURN m {.*} AS m
ORDER BY m.seq
