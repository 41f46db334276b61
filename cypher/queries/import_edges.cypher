// Import typed edges between topics of one namespace: a new edge takes the imported weight and
// time, an existing one keeps the larger weight and the later time (re-importing changes
// nothing). One FOREACH per member of the closed EdgeType enum, as in merge_sleep_links.
// params: $namespace, $rows: list<{from_id, to_id, type: string (EdgeType), weight: float,
//         last_updated_at: datetime | null}>, $now: datetime
// returns: nothing
UNWIND $rows AS row
MATCH (a:Topic {topic_id: row.from_id, namespace: $namespace})
MATCH (b:Topic {topic_id: row.to_id, namespace: $namespace})
WITH a, b, row, coalesce(row.last_updated_at, $now) AS at
FOREACH (_ IN CASE WHEN row.type = 'RELATES_TO' THEN [1] ELSE [] END |
  MERGE (a)-[r:RELATES_TO]->(b)
  ON CREATE SET r.weight = row.weight, r.created_at = $now, r.last_updated_at = at
  ON MATCH SET r.weight = CASE WHEN row.weight > r.weight THEN row.weight ELSE r.weight END,
               r.last_updated_at = CASE WHEN at > r.last_updated_at THEN at ELSE r.last_updated_at END)
FOREACH (_ IN CASE WHEN row.type = 'DEPENDS_ON' THEN [1] ELSE [] END |
  MERGE (a)-[r:DEPENDS_ON]->(b)
  ON CREATE SET r.weight = row.weight, r.created_at = $now, r.last_updated_at = at
  ON MATCH SET r.weight = CASE WHEN row.weight > r.weight THEN row.weight ELSE r.weight END,
               r.last_updated_at = CASE WHEN at > r.last_updated_at THEN at ELSE r.last_updated_at END)
FOREACH (_ IN CASE WHEN row.type = 'PART_OF' THEN [1] ELSE [] END |
  MERGE (a)-[r:PART_OF]->(b)
  ON CREATE SET r.weight = row.weight, r.created_at = $now, r.last_updated_at = at
  ON MATCH SET r.weight = CASE WHEN row.weight > r.weight THEN row.weight ELSE r.weight END,
               r.last_updated_at = CASE WHEN at > r.last_updated_at THEN at ELSE r.last_updated_at END)
FOREACH (_ IN CASE WHEN row.type = 'NEXT' THEN [1] ELSE [] END |
  MERGE (a)-[r:NEXT]->(b)
  ON CREATE SET r.weight = row.weight, r.created_at = $now, r.last_updated_at = at
  ON MATCH SET r.weight = CASE WHEN row.weight > r.weight THEN row.weight ELSE r.weight END,
               r.last_updated_at = CASE WHEN at > r.last_updated_at THEN at ELSE r.last_updated_at END)
FOREACH (_ IN CASE WHEN row.type = 'PREV' THEN [1] ELSE [] END |
  MERGE (a)-[r:PREV]->(b)
  ON CREATE SET r.weight = row.weight, r.created_at = $now, r.last_updated_at = at
  ON MATCH SET r.weight = CASE WHEN row.weight > r.weight THEN row.weight ELSE r.weight END,
               r.last_updated_at = CASE WHEN at > r.last_updated_at THEN at ELSE r.last_updated_at END)
