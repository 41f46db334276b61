// Every live skill of a namespace with its embedding, and the namespace's skill stamp, for the
// skill store's in-process cache (graph/skills.py, SkillVectors): skill routing ranks the few
// skills of a namespace from these vectors instead of a vector-index query per context request.
// The stamp is computed exactly as read_context_start.cypher computes skills_stamp (keep the two
// expressions identical): one entry per skill node, retired or not, ordered by skill_id, that
// changes whenever an upsert, a retirement, a re-embedding or a removal touches one.
// params: $namespace, $cap: int (a namespace with more skill nodes than this is not cached)
// returns one row: stamp (list<string> | null: more than $cap skill nodes),
//          skills (list<{s: map (the fields skill_from_props reads), embedding: list<float> | null}>,
//          live skills only; empty when stamp is null)
MATCH (s:Skill {namespace: $namespace})
WITH s ORDER BY s.skill_id LIMIT $cap + 1
WITH collect(s) AS found
WITH CASE WHEN size(found) > $cap THEN null ELSE found END AS kept
RETURN
  CASE WHEN kept IS NULL THEN null ELSE [s IN kept |
    s.skill_id + '|' + coalesce(s.embedding_hash, '') + '|' + coalesce(toString(s.updated_at), '')
    + '|' + coalesce(toString(s.retired_at), '')] END AS stamp,
  [s IN coalesce(kept, []) WHERE s.retired_at IS NULL |
    {s: s {.skill_id, .namespace, .name, .description, .tags, .requires_tools,
           .default_reasoning_effort, .examples, .manifest_json},
     embedding: s.embedding}] AS skills
