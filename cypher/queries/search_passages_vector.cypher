// The passages of one namespace nearest a vector, with their messages: evidence found by
// meaning. A namespace of at most $exact_max passages (counted here, a seek of its namespace
// index that stops at $exact_max + 1) is scored exactly without the vector index. A larger one
// asks passage_embedding_ns for $fetch of its own nearest (`SEARCH ... WHERE p.namespace =
// $namespace`: the namespace is a filter property of the index, 022, so another tenant's
// passages are never read), keeps those said before $until (a post-filter) and picks the $k
// best by exact cosine (the index is approximate within the namespace; asked for several
// times k and rescored it is exact, as search_topics_vector.cypher). When $until kept fewer
// than $k while the index had more: an exact scan of the namespace's passages if it has at
// most $scan_max (passage_namespace index; it cannot miss), else the index again with
// $fetch_more rows, and the exact scan only if that is short too. Each fallback sits inside a
// CASE so it runs only when taken. Kept passages are scored exactly; equal scores (a sentence
// said twice) go to the older passage, and each hit's topics come by name: never in the
// store's own order, which other tenants' writes and deletes move (docs/security.md).
// params: $vector: list<float>, $fetch: int, $fetch_more: int, $k: int, $namespace,
//         $until: ISO datetime text | null (only passages said before it), $scan_max: int,
//         $exact_max: int (largest namespace scored exactly without the index; -1: never)
// returns: raw (rows of the last index call; 0 when none ran), scanned (an exact scan answered),
//          hits: list<{m: map, text, score: cosine, topics: list<{topic_id, name}> by name}>,
//          best first; the message's times as ISO text (graph/mapping.py parses them)
CYPHER 25
WITH size(COLLECT {
  MATCH (p:Passage) WHERE p.namespace = $namespace RETURN 1 AS one LIMIT $exact_max + 1
}) <= $exact_max AS exact
WITH exact, CASE WHEN exact THEN [] ELSE COLLECT {
  MATCH (p:Passage)
    SEARCH p IN (VECTOR INDEX passage_embedding_ns FOR $vector
                 WHERE p.namespace = $namespace LIMIT $fetch)
  RETURN p
} END AS found
WITH exact, size(found) AS raw, COLLECT {
  UNWIND found AS p
  WITH p WHERE $until IS NULL OR p.at < datetime($until)
  WITH p ORDER BY vector.similarity.cosine(p.embedding, $vector) DESC, p.at, p.seq, p.message_id
    LIMIT $k
  RETURN p
} AS kept
WITH exact, raw, kept, NOT exact AND size(kept) < $k AND raw >= $fetch AS short
WITH exact, raw, kept, short, CASE WHEN short THEN size(COLLECT {
  MATCH (p:Passage) WHERE p.namespace = $namespace
  RETURN 1 AS one LIMIT $scan_max + 1
}) ELSE 0 END AS own
WITH raw, kept, short AND own > $scan_max AS again,
  exact OR (short AND own <= $scan_max) AS scan
WITH raw, kept, again, scan, CASE WHEN again THEN COLLECT {
  MATCH (p:Passage)
    SEARCH p IN (VECTOR INDEX passage_embedding_ns FOR $vector
                 WHERE p.namespace = $namespace LIMIT $fetch_more)
  RETURN p
} ELSE [] END AS more
WITH CASE WHEN again THEN size(more) ELSE raw END AS raw, scan, again, CASE WHEN again
  THEN COLLECT {
    UNWIND more AS p
    WITH p WHERE $until IS NULL OR p.at < datetime($until)
    WITH p ORDER BY vector.similarity.cosine(p.embedding, $vector) DESC, p.at, p.seq, p.message_id
    LIMIT $k
    RETURN p
  }
  ELSE kept END AS kept
WITH raw, kept, scan OR (again AND size(kept) < $k AND raw >= $fetch_more) AS scanned
WITH raw, scanned, CASE WHEN scanned THEN COLLECT {
  MATCH (p:Passage)
  WHERE p.namespace = $namespace AND ($until IS NULL OR p.at < datetime($until))
  WITH p ORDER BY vector.similarity.cosine(p.embedding, $vector) DESC, p.at, p.seq, p.message_id
    LIMIT $k
  RETURN p
} ELSE kept END AS chosen
UNWIND (CASE WHEN size(chosen) = 0 THEN [null] ELSE chosen END) AS p
OPTIONAL MATCH (m:Message {namespace: $namespace})-[:HAS_PASSAGE]->(p)
WITH raw, scanned, p, m, CASE WHEN p IS NULL THEN null
                              ELSE vector.similarity.cosine(p.embedding, $vector) END AS score
ORDER BY score DESC, p.at, p.seq, p.message_id
RETURN raw, scanned, collect(CASE WHEN m IS NULL THEN null ELSE
  {m: m {.*, at: toString(m.at), compacted_at: toString(m.compacted_at)}, text: p.text,
   score: score,
   topics: COLLECT {
     MATCH (t:Topic)-[:MENTIONED_IN]->(m) WHERE t.archived_at IS NULL
     WITH t ORDER BY t.name, t.topic_id
     RETURN {topic_id: t.topic_id, name: t.name}
   }} END) AS hits
