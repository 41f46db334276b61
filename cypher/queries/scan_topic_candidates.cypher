// Exact fallback of match_topic_candidates for candidates the over-fetched index could not serve:
// the exact top $k by cosine (exact scan of the namespace, so a small namespace in a big database
// is served exactly) plus any topic whose name or alias equals one of the candidate's phrases.
// The namespace's vectors are read once into a list and every row is scored against that list
// (reading the vector property again for every row cost ~3x more); UNION ALL because the
// aggregation below de-duplicates (UNION would hash the whole list per row).
// Only ids and scores come back; the caller fetches each distinct topic once.
// params: $namespace, $rows: list<{idx: int, vector: list<float>, names: list<string>,
//         lucene: string (graph/fulltext.py name_query: exact names and aliases)}>, $k
// returns: idx, topic_id, cosine (plain cosine in [-1, 1]), via ('vector' | 'alias')
MATCH (t:Topic {namespace: $namespace})
WHERE t.archived_at IS NULL AND t.embedding IS NOT NULL
WITH collect({id: t.topic_id, vector: t.embedding}) AS pool
UNWIND $rows AS row
CALL (row, pool) {
  UNWIND pool AS p
  WITH p.id AS topic_id, vector.similarity.cosine(p.vector, row.vector) AS s
  ORDER BY s DESC
  LIMIT $k
  RETURN topic_id, s, 'vector' AS via
  UNION ALL
  CALL db.index.fulltext.queryNodes('topic_names', row.lucene, {limit: 50}) YIELD node
  WITH node AS t
  WHERE t.namespace = $namespace AND t.archived_at IS NULL
    AND (t.name_lc IN row.names OR any(a IN t.aliases_lc WHERE a IN row.names))
  RETURN t.topic_id AS topic_id,
         CASE WHEN t.embedding IS NULL THEN 0.5
              ELSE vector.similarity.cosine(t.embedding, row.vector) END AS s,
         'alias' AS via
}
WITH row.idx AS idx, topic_id, max(s) AS s, collect(via) AS vias
RETURN idx, topic_id, 2.0 * s - 1.0 AS cosine,
       CASE WHEN 'vector' IN vias THEN 'vector' ELSE 'alias' END AS via
