// The stored messages of a namespace that carry one of the given external ids, oldest first.
// params: $namespace, $external_ids: list<string>   returns: m (map)
UNWIND $external_ids AS xid
MATCH (m:Message {namespace: $namespace, external_id: xid})
RETURN m {.*} AS m ORDER BY m.seq
