// Vector search over the skills of a namespace. A namespace of at most $exact_max skill nodes
// (counted here; a seek of its namespace index that stops at $exact_max + 1) is scored exactly
// without the vector index (as scan_skills_vector). A larger one asks skill_embedding_ns for
// $fetch of its own nearest (`SEARCH ... WHERE s.namespace = $namespace`: the namespace is a
// filter property of the index, 022, so another tenant's skills are never read), keeps the live
// ones and picks the $k best by exact cosine, as scan_skills_vector scores them, so a score
// does not depend on which path found the skill.
// params: $vector: list<float>, $fetch: int, $k: int, $namespace,
//         $exact_max: int (largest namespace scored exactly without the index; -1: never)
// returns: raw (hits before filtering; 0 when the index was not asked), scanned (the exact
//          scan answered), hits: list<{s: map, score: float}>, best first;
//          score = (1 + cos) / 2
// The skill maps carry the fields graph/skills.py's skill_from_props reads, no more: with .* the
// driver decoded every skill's created/updated times in pure Python (~5 ms of the API's CPU per
// context request, docs/performance.md).
CYPHER 25
WITH size(COLLECT {
  MATCH (s:Skill) WHERE s.namespace = $namespace RETURN 1 AS one LIMIT $exact_max + 1
}) <= $exact_max AS exact
WITH exact, CASE WHEN exact THEN COLLECT {
  MATCH (s:Skill)
  WHERE s.namespace = $namespace AND s.embedding IS NOT NULL AND s.retired_at IS NULL
  WITH s ORDER BY vector.similarity.cosine(s.embedding, $vector) DESC LIMIT $k
  RETURN s
} ELSE COLLECT {
  MATCH (s:Skill)
    SEARCH s IN (VECTOR INDEX skill_embedding_ns FOR $vector
                 WHERE s.namespace = $namespace LIMIT $fetch)
  RETURN s
} END AS found
WITH exact, CASE WHEN exact THEN 0 ELSE size(found) END AS raw, COLLECT {
  UNWIND found AS n
  WITH n WHERE n.retired_at IS NULL
  WITH n ORDER BY vector.similarity.cosine(n.embedding, $vector) DESC LIMIT $k
  RETURN n
} AS kept
UNWIND (CASE WHEN size(kept) = 0 THEN [null] ELSE kept END) AS n
WITH exact, raw, n, CASE WHEN n IS NULL THEN null
                         ELSE vector.similarity.cosine(n.embedding, $vector) END AS score
ORDER BY score DESC
RETURN raw, exact AS scanned, collect(CASE WHEN n IS NULL THEN null ELSE
  {s: n {.skill_id, .namespace, .name, .description, .tags, .requires_tools,
         .default_reasoning_effort, .examples, .manifest_json}, score: score} END) AS hits
