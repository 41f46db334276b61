// Vector search over the skills of a namespace. A namespace of at most $exact_max skill nodes
// (counted here; a seek of its namespace index that stops at $exact_max + 1) never touches the
// shared vector index: its live skills are scored exactly (as scan_skills_vector), the same
// answer and reads beside any neighbour. A larger one: the index over-fetched, then filtered to
// the namespace (5.26 has no in-index filtering). The kept skills are scored exactly, as
// scan_skills_vector scores them, so a score does not depend on which path found the skill.
// params: $vector: list<float>, $fetch: int, $k: int, $namespace,
//         $exact_max: int (largest namespace scored exactly without the index; -1: never)
// returns: raw (hits before filtering; 0 when the index was not asked), scanned (the exact
//          scan answered), hits: list<{s: map, score: float}>, best first;
//          score = (1 + cos) / 2
// The skill maps carry the fields graph/skills.py's skill_from_props reads, no more: with .* the
// driver decoded every skill's created/updated times in pure Python (~5 ms of the API's CPU per
// context request, docs/performance.md).
WITH size(COLLECT {
  MATCH (s:Skill) WHERE s.namespace = $namespace RETURN 1 AS one LIMIT $exact_max + 1
}) <= $exact_max AS exact
WITH exact, CASE WHEN exact THEN COLLECT {
  MATCH (s:Skill)
  WHERE s.namespace = $namespace AND s.embedding IS NOT NULL AND s.retired_at IS NULL
  WITH s ORDER BY vector.similarity.cosine(s.embedding, $vector) DESC LIMIT $k
  RETURN s
} ELSE COLLECT {
  CALL db.index.vector.queryNodes('skill_embedding', $fetch, $vector) YIELD node
  RETURN node
} END AS found
WITH exact, CASE WHEN exact THEN 0 ELSE size(found) END AS raw,
  [n IN found WHERE n.namespace = $namespace AND n.retired_at IS NULL][0..$k] AS kept
UNWIND (CASE WHEN size(kept) = 0 THEN [null] ELSE kept END) AS n
WITH exact, raw, n, CASE WHEN n IS NULL THEN null
                         ELSE vector.similarity.cosine(n.embedding, $vector) END AS score
ORDER BY score DESC
RETURN raw, exact AS scanned, collect(CASE WHEN n IS NULL THEN null ELSE
  {s: n {.skill_id, .namespace, .name, .description, .tags, .requires_tools,
         .default_reasoning_effort, .examples, .manifest_json}, score: score} END) AS hits
