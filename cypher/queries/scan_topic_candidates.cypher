// Exact fallback of match_topic_candidates for candidates the over-fetched index could not serve:
// the exact top $k by
// cosine (exact scan of the namespace, so a small namespace in a big database is served
// exactly) plus any topic whose name or alias equals one of the candidate's phrases.
// Only ids and scores come back; the caller fetches each distinct topic once.
// params: $namespace, $rows: list<{idx: int, vector: list<float>, names: list<string>,
//         lucene: string (phrase query over name and alias_text)}>, $k
// returns: idx, topic_id, cosine (plain cosine in [-1, 1])
UNWIND $rows AS row
CALL (row) {
  MATCH (t:Topic {namespace: $namespace})
  WHERE t.archived_at IS NULL AND t.embedding IS NOT NULL
  WITH t, vector.similarity.cosine(t.embedding, row.vector) AS s
  ORDER BY s DESC
  LIMIT $k
  RETURN t, s, 'vector' AS via
  UNION
  CALL db.index.fulltext.queryNodes('topic_text', row.lucene, {limit: 50}) YIELD node
  WITH node AS t
  WHERE t.namespace = $namespace AND t.archived_at IS NULL
    AND (t.name_lc IN row.names OR any(a IN t.aliases_lc WHERE a IN row.names))
  RETURN t, CASE WHEN t.embedding IS NULL THEN 0.5
                 ELSE vector.similarity.cosine(t.embedding, row.vector) END AS s, 'alias' AS via
}
WITH row.idx AS idx, t.topic_id AS topic_id, max(s) AS s, collect(via) AS vias
RETURN idx, topic_id, 2.0 * s - 1.0 AS cosine,
       CASE WHEN 'vector' IN vias THEN 'vector' ELSE 'alias' END AS via
