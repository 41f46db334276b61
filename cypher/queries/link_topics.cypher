// Create or strengthen typed edges between topics of one namespace; {rel_type} comes from the
// closed EdgeType enum. Missing endpoints produce no row.
// params: $namespace, $rows: list<{from_id, to_id, delta: float}>, $now: datetime
// returns: from_id, to_id, weight, last_updated_at
UNWIND $rows AS row
MATCH (a:Topic {topic_id: row.from_id, namespace: $namespace})
MATCH (b:Topic {topic_id: row.to_id, namespace: $namespace})
MERGE (a)-[r:{rel_type}]->(b)
ON CREATE SET r.weight = row.delta, r.created_at = $now
ON MATCH SET r.weight = r.weight + row.delta
SET r.last_updated_at = $now
RETURN a.topic_id AS from_id, b.topic_id AS to_id, r.weight AS weight,
       r.last_updated_at AS last_updated_at
