// The typed edges between topics of one namespace whose both ends are in a list.
// params: $namespace, $topic_ids: list<string>
// returns: from_id, to_id, type, weight, last_updated_at
MATCH (a:Topic {namespace: $namespace})-[r]->(b:Topic {namespace: $namespace})
WHERE a.topic_id IN $topic_ids AND b.topic_id IN $topic_ids
  AND type(r) IN ['RELATES_TO', 'DEPENDS_ON', 'PART_OF', 'NEXT', 'PREV']
RETURN a.topic_id AS from_id, b.topic_id AS to_id, type(r) AS type, r.weight AS weight,
       r.last_updated_at AS last_updated_at
