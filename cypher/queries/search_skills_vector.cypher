// Approximate vector search over skills, over-fetched, then filtered to a namespace
// (5.26 has no in-index filtering). Scores are (1 + cos) / 2.
// params: $vector: list<float>, $fetch: int, $k: int, $namespace
// returns: raw (hits before filtering), hits: list<{s: map, score: float}>
CALL db.index.vector.queryNodes('skill_embedding', $fetch, $vector) YIELD node, score
WITH collect({node: node, score: score}) AS hits_all
WITH size(hits_all) AS raw,
  [h IN hits_all WHERE h.node.namespace = $namespace AND h.node.retired_at IS NULL][0..$k] AS kept
UNWIND (CASE WHEN size(kept) = 0 THEN [null] ELSE kept END) AS h
WITH raw, h.node AS n, h.score AS score
RETURN raw, collect(CASE WHEN n IS NULL THEN null
                    ELSE {s: n {.*, embedding: null}, score: score} END) AS hits
