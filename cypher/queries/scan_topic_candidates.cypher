// For each sleep candidate, the namespace's topics it could merge into: the exact top $k by
// cosine (exact scan of the namespace, so a small namespace in a big database is served
// exactly) plus any topic whose name or alias equals one of the candidate's phrases.
// params: $namespace, $rows: list<{idx: int, vector: list<float>, names: list<string>}>, $k
// returns: idx, t (map, no embedding), cosine (plain cosine in [-1, 1])
UNWIND $rows AS row
CALL (row) {
  MATCH (t:Topic {namespace: $namespace})
  WHERE t.archived_at IS NULL AND t.embedding IS NOT NULL
  WITH t, vector.similarity.cosine(t.embedding, row.vector) AS s
  ORDER BY s DESC
  LIMIT $k
  RETURN t, s
  UNION
  MATCH (t:Topic {namespace: $namespace})
  WHERE t.archived_at IS NULL
    AND (t.name_lc IN row.names OR any(a IN t.aliases_lc WHERE a IN row.names))
  RETURN t, CASE WHEN t.embedding IS NULL THEN 0.5
                 ELSE vector.similarity.cosine(t.embedding, row.vector) END AS s
}
WITH row.idx AS idx, t, max(s) AS s
RETURN idx, t {.*, embedding: null} AS t, 2.0 * s - 1.0 AS cosine
