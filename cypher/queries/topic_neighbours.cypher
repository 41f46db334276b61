// 1-hop neighbours of several topics over the given edge types, within the namespace.
// params: $namespace, $topic_ids: list<string>, $types: list<string>, $limit: int
// returns: seed_id, t (map, no embedding), type, weight, outgoing (edge points seed -> t)
UNWIND $topic_ids AS seed_id
MATCH (s:Topic {topic_id: seed_id, namespace: $namespace})-[r]-(t:Topic {namespace: $namespace})
WHERE type(r) IN $types AND t.archived_at IS NULL
WITH seed_id, t, r, startNode(r) = s AS outgoing
ORDER BY r.weight DESC
WITH seed_id, collect({t: t {.*, embedding: null}, type: type(r), weight: r.weight,
                       outgoing: outgoing})[0..$limit] AS rows
UNWIND rows AS row
RETURN seed_id, row.t AS t, row.type AS type, row.weight AS weight, row.outgoing AS outgoing
