// Approximate vector search over skills, over-fetched, then filtered to a namespace
// (5.26 has no in-index filtering). The kept skills are scored exactly, as scan_skills_vector
// scores them, so a score does not depend on which path found the skill.
// params: $vector: list<float>, $fetch: int, $k: int, $namespace
// returns: raw (hits before filtering), hits: list<{s: map, score: float}>, best first;
//          score = (1 + cos) / 2
// The skill maps carry the fields graph/skills.py's skill_from_props reads, no more: with .* the
// driver decoded every skill's created/updated times in pure Python (~5 ms of the API's CPU per
// context request, docs/performance.md).
CALL db.index.vector.queryNodes('skill_embedding', $fetch, $vector) YIELD node
WITH collect(node) AS found
WITH size(found) AS raw,
  [n IN found WHERE n.namespace = $namespace AND n.retired_at IS NULL][0..$k] AS kept
UNWIND (CASE WHEN size(kept) = 0 THEN [null] ELSE kept END) AS n
WITH raw, n, CASE WHEN n IS NULL THEN null
                  ELSE vector.similarity.cosine(n.embedding, $vector) END AS score
ORDER BY score DESC
RETURN raw, collect(CASE WHEN n IS NULL THEN null ELSE
  {s: n {.skill_id, .namespace, .name, .description, .tags, .requires_tools,
         .default_reasoning_effort, .examples, .manifest_json}, score: score} END) AS hits
