// The typed edges leaving one page of a namespace's topics (by source topic id), for export.
// params: $namespace, $after_id: string ('' for the first page), $limit: int (source topics)
// returns: from_id, edges: list<{to_id, type, weight, last_updated_at}>
// USING INDEX: the (namespace, topic_id) index (024) in its own order, whatever the planner's
// statistics say of the namespace's size (docs/performance.md, "The neighbourhood").
MATCH (a:Topic {namespace: $namespace})
USING INDEX a:Topic(namespace, topic_id)
WHERE a.topic_id > $after_id
WITH a ORDER BY a.namespace, a.topic_id LIMIT $limit
OPTIONAL MATCH (a)-[r]->(b:Topic {namespace: $namespace})
WHERE type(r) IN ['RELATES_TO', 'DEPENDS_ON', 'PART_OF', 'NEXT', 'PREV']
WITH a, r, b ORDER BY b.topic_id, type(r)
RETURN a.topic_id AS from_id,
       [x IN collect(CASE WHEN r IS NULL THEN null ELSE {to_id: b.topic_id, type: type(r),
         weight: r.weight, last_updated_at: r.last_updated_at} END) WHERE x IS NOT NULL] AS edges
ORDER BY from_id
