// Topics by id within one namespace, with the ids of RELATES_TO neighbours.
// params: $namespace: string, $topic_ids: list<string>
// returns: t (map, no embedding), related (list<string>)
UNWIND $topic_ids AS id
MATCH (t:Topic {topic_id: id, namespace: $namespace})
OPTIONAL MATCH (t)-[:RELATES_TO]-(o:Topic {namespace: $namespace})
RETURN t {.*, embedding: null} AS t, collect(DISTINCT o.topic_id) AS related
