// A sleep's edge updates of every type in ONE statement (link_topics.cypher takes one type per
// statement): create or strengthen typed edges between topics of one namespace. Each row names
// its type; one FOREACH per member of the closed EdgeType enum writes it (a unit test checks
// that every member has its branch). Nothing is returned (the sleep does not read it back,
// and returning the weight would force an Eager over all rows).
// params: $namespace, $rows: list<{from_id, to_id, type: string (EdgeType), delta: float}>,
//         $now: datetime
// returns: nothing
UNWIND $rows AS row
MATCH (a:Topic {topic_id: row.from_id, namespace: $namespace})
MATCH (b:Topic {topic_id: row.to_id, namespace: $namespace})
FOREACH (_ IN CASE WHEN row.type = 'RELATES_TO' THEN [1] ELSE [] END |
  MERGE (a)-[r:RELATES_TO]->(b)
  ON CREATE SET r.weight = row.delta, r.created_at = $now, r.last_updated_at = $now
  ON MATCH SET r.weight = r.weight + row.delta, r.last_updated_at = $now)
FOREACH (_ IN CASE WHEN row.type = 'DEPENDS_ON' THEN [1] ELSE [] END |
  MERGE (a)-[r:DEPENDS_ON]->(b)
  ON CREATE SET r.weight = row.delta, r.created_at = $now, r.last_updated_at = $now
  ON MATCH SET r.weight = r.weight + row.delta, r.last_updated_at = $now)
FOREACH (_ IN CASE WHEN row.type = 'PART_OF' THEN [1] ELSE [] END |
  MERGE (a)-[r:PART_OF]->(b)
  ON CREATE SET r.weight = row.delta, r.created_at = $now, r.last_updated_at = $now
  ON MATCH SET r.weight = r.weight + row.delta, r.last_updated_at = $now)
FOREACH (_ IN CASE WHEN row.type = 'NEXT' THEN [1] ELSE [] END |
  MERGE (a)-[r:NEXT]->(b)
  ON CREATE SET r.weight = row.delta, r.created_at = $now, r.last_updated_at = $now
  ON MATCH SET r.weight = r.weight + row.delta, r.last_updated_at = $now)
FOREACH (_ IN CASE WHEN row.type = 'PREV' THEN [1] ELSE [] END |
  MERGE (a)-[r:PREV]->(b)
  ON CREATE SET r.weight = row.delta, r.created_at = $now, r.last_updated_at = $now
  ON MATCH SET r.weight = r.weight + row.delta, r.last_updated_at = $now)
