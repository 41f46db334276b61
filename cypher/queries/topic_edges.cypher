// Typed edges touching one topic (both directions) within the namespace.
// params: $namespace, $topic_id   returns: from_id, to_id, type, weight, last_updated_at
MATCH (t:Topic {topic_id: $topic_id, namespace: $namespace})-[r]-(o:Topic {namespace: $namespace})
WHERE type(r) IN ['RELATES_TO', 'DEPENDS_ON', 'PART_OF', 'NEXT', 'PREV']
RETURN startNode(r).topic_id AS from_id, endNode(r).topic_id AS to_id, type(r) AS type,
       r.weight AS weight, r.last_updated_at AS last_updated_at
