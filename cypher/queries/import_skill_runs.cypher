// Import skill runs (create only), linked to the topics they used and to their parent run in
// the same namespace (the skill itself is linked when it is installed there).
// params: $namespace, $rows: list<{props: map, topic_ids: list<string>}>
// returns: run_id
UNWIND $rows AS row
MERGE (r:SkillRun {run_id: row.props.run_id})
ON CREATE SET r = row.props, r.namespace = $namespace, r.topic_ids = row.topic_ids
WITH r, row
WHERE r.namespace = $namespace
OPTIONAL MATCH (s:Skill {namespace: $namespace, skill_id: r.skill_id})
FOREACH (_ IN CASE WHEN s IS NULL THEN [] ELSE [1] END | MERGE (r)-[:RUN_OF]->(s))
WITH DISTINCT r, row
OPTIONAL MATCH (p:SkillRun {run_id: r.parent_run_id, namespace: $namespace})
FOREACH (_ IN CASE WHEN p IS NULL THEN [] ELSE [1] END | MERGE (r)-[:PART_OF_RUN]->(p))
WITH DISTINCT r, row
OPTIONAL MATCH (t:Topic {namespace: $namespace}) WHERE t.topic_id IN row.topic_ids
FOREACH (_ IN CASE WHEN t IS NULL THEN [] ELSE [1] END | MERGE (r)-[:USED_TOPIC]->(t))
RETURN DISTINCT r.run_id AS run_id
