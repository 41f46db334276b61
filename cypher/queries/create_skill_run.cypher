// Record one skill run, linked to its skill, to the topics it used (only topics of the same
// namespace) and to the run that started it. Nested runs finish (and are recorded) before the
// run that started them, so runs already recorded with this parent_run_id are linked here too.
// params: $namespace, $props: map (run_id, skill_id, outcome, started_at, ...),
//         $topic_ids: list<string>, $parent_run_id: string | null
// returns: run_id, topic_ids (the topic ids that exist in the namespace and were linked, in the
//          order of $topic_ids: the index's order is not the caller's)
CREATE (r:SkillRun)
SET r = $props, r.namespace = $namespace
WITH r
OPTIONAL MATCH (s:Skill {namespace: $namespace, skill_id: r.skill_id})
FOREACH (_ IN CASE WHEN s IS NULL THEN [] ELSE [1] END | MERGE (r)-[:RUN_OF]->(s))
WITH r
OPTIONAL MATCH (p:SkillRun {run_id: $parent_run_id, namespace: $namespace})
FOREACH (_ IN CASE WHEN p IS NULL THEN [] ELSE [1] END | MERGE (r)-[:PART_OF_RUN]->(p))
WITH DISTINCT r
OPTIONAL MATCH (c:SkillRun {namespace: $namespace, parent_run_id: r.run_id})
FOREACH (_ IN CASE WHEN c IS NULL THEN [] ELSE [1] END | MERGE (c)-[:PART_OF_RUN]->(r))
WITH DISTINCT r
OPTIONAL MATCH (t:Topic {namespace: $namespace})
WHERE t.topic_id IN $topic_ids
FOREACH (_ IN CASE WHEN t IS NULL THEN [] ELSE [1] END | MERGE (r)-[:USED_TOPIC]->(t))
WITH r, collect(t.topic_id) AS found
WITH r, [id IN $topic_ids WHERE id IN found] AS linked
SET r.topic_ids = linked
RETURN r.run_id AS run_id, linked AS topic_ids
