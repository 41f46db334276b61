// Soft-retire the skills of a namespace that are no longer on disk (their runs stay linked).
// params: $namespace, $keep: list<string> (skill ids still present), $now: datetime
// returns: skill_id (of each skill retired now)
MATCH (s:Skill {namespace: $namespace})
WHERE s.retired_at IS NULL AND NOT s.skill_id IN $keep
SET s.retired_at = $now
RETURN s.skill_id AS skill_id
