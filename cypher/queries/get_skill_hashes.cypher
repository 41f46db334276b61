// What is stored for each skill of a namespace, to skip re-embedding unchanged skills.
// params: $namespace
// returns: skill_id, embedding_hash, manifest_json, retired (bool)
MATCH (s:Skill {namespace: $namespace})
RETURN s.skill_id AS skill_id, s.embedding_hash AS embedding_hash,
       s.manifest_json AS manifest_json, s.retired_at IS NOT NULL AS retired
