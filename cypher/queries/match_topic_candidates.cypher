// For each sleep candidate, the namespace's topics it could merge into: the top $k by exact
// cosine of the $fetch nearest the vector index finds in the namespace (`SEARCH` on
// topic_embedding_ns, namespace as its filter property: 022; approximate within the namespace,
// so asked for more than $k and rescored), the live ones kept, plus any topic whose name or
// alias equals one of the candidate's phrases. Only ids and scores come back; the caller
// fetches each distinct topic once, and scans exactly (scan_topic_candidates) for rows the
// index could not fill.
// params: $namespace, $rows: list<{idx: int, vector: list<float>, names: list<string>,
//         lucene: string (graph/fulltext.py name_query: exact names and aliases)}>,
//         $k, $fetch
// returns: idx, topic_id, cosine (plain cosine in [-1, 1]), via ('vector' | 'alias')
CYPHER 25
UNWIND $rows AS row
CALL (row) {
  MATCH (t:Topic)
    SEARCH t IN (VECTOR INDEX topic_embedding_ns FOR row.vector
                 WHERE t.namespace = $namespace LIMIT $fetch)
  WITH t WHERE t.archived_at IS NULL
  WITH t, vector.similarity.cosine(t.embedding, row.vector) AS s
  ORDER BY s DESC
  LIMIT $k
  RETURN t, s, 'vector' AS via
  UNION
  CALL db.index.fulltext.queryNodes('topic_names', row.lucene, {limit: 50}) YIELD node
  WITH node AS t
  WHERE t.namespace = $namespace AND t.archived_at IS NULL
    AND (t.name_lc IN row.names OR any(a IN t.aliases_lc WHERE a IN row.names))
  RETURN t, CASE WHEN t.embedding IS NULL THEN 0.5
                 ELSE vector.similarity.cosine(t.embedding, row.vector) END AS s, 'alias' AS via
}
WITH row.idx AS idx, t.topic_id AS topic_id, max(s) AS s, collect(via) AS vias
RETURN idx, topic_id, 2.0 * s - 1.0 AS cosine, CASE WHEN 'vector' IN vias THEN 'vector' ELSE 'alias' END AS via
