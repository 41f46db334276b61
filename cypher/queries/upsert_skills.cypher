// Create or update skills by (namespace, skill_id); a re-synced skill is no longer retired.
// params: $namespace, $rows: list<{skill_id, props: map, embedding: list<float> | null}>
//         (null embedding keeps the stored vector), $now: datetime
// returns: skill_id
UNWIND $rows AS row
MERGE (s:Skill {namespace: $namespace, skill_id: row.skill_id})
ON CREATE SET s.created_at = $now
SET s += row.props, s.updated_at = $now, s.retired_at = null
FOREACH (_ IN CASE WHEN row.embedding IS NULL THEN [] ELSE [1] END |
  SET s.embedding = row.embedding)
RETURN s.skill_id AS skill_id
