// Nearest topics of one namespace, confined to it inside the vector index: `SEARCH` on
// topic_embedding_ns (namespace as its filter property, 022) walks only the namespace's
// vectors, so no other tenant's topics change what it finds or what it reads (docs/security.md,
// "Vector search confined before ranking"; docs/neo4j.md, "Filtered vector search"). A
// namespace of at most $exact_max topics (counted here, a seek of its namespace index that
// stops at $exact_max + 1) is scored exactly without the index (its topics in the window).
// A larger one asks the index for $fetch of its nearest (approximate within the namespace:
// Lucene's filtered HNSW), keeps the live ones in the time window (post-filters: `SEARCH` may
// filter only by `=`/ranges on filter properties, no `IS NULL`) and picks the $k best of those
// by exact cosine (asked for 5 x k and rescored, the index's approximation is exact here:
// recall@10 1.000 against 0.84 for LIMIT k, docs/neo4j.md).
// When the filters kept fewer than $k while the index had more (the window is narrow, or many
// topics are archived): if the namespace has at most $scan_max topics in the window, an exact
// scan of them (range seek on (namespace, last_seen_at); it cannot miss); else the index again
// with $fetch_more rows, and the exact scan only if that is short too. All in one round trip;
// each branch sits inside a CASE so it runs only when taken (a CALL subquery's MATCH was
// planned ahead of its condition and seeked the whole namespace on every call: 100k index rows
// per search at 100k topics). Kept topics are scored exactly either way, so a score does not
// depend on which path found the topic (the index's own score drifts by ~1e-4). Equal scores
// are ordered by the topic's name, then first_seen_at, then topic_id (a key of the topic's own,
// not the order Neo4j reads the namespace in; the worker's copy, graph/topic_vectors.py, orders
// them alike).
// params: $vector: list<float>, $fetch: int, $fetch_more: int, $k: int, $namespace,
//         $since: datetime | null, $until: datetime | null (every time as ISO text, read with
//         datetime(): graph/db.py iso),
//         $scan_since: datetime ($since, or a date before every topic: the scan's range seek),
//         $scan_max: int (largest window scored exactly instead of asking the index again),
//         $exact_max: int (largest namespace scored exactly without the index; -1: never)
// $light: true reads only the fields a search result shows (those topic_from_props reads,
// without facts and events; not the lower-cased and full-text copies, created/updated times or
// the vector; times as ISO text, parsed by graph/mapping.py: no driver temporal decoding,
// docs/performance.md); false: the whole topic.
// $topic_ids: list<string> (may be empty): topics read by id besides, as get_topics_by_id
// reads them with the same $light (the full-text ranking's, so that a light search reads
// its vector and full-text records in one round trip, docs/performance.md)
// returns: raw (hits of the last index call; 0 when none ran), scanned (an exact scan answered),
//          hits: list<{t: map, score: float}>, best first; score = (1 + cos) / 2,
//          topics: list<map>, the topics of $topic_ids in the order asked, but those in hits
//          (ids not in the namespace are left out)
CYPHER 25
WITH size(COLLECT {
  MATCH (t:Topic) WHERE t.namespace = $namespace RETURN 1 AS one LIMIT $exact_max + 1
}) <= $exact_max AS exact
WITH exact, CASE WHEN exact THEN [] ELSE COLLECT {
  MATCH (n:Topic)
    SEARCH n IN (VECTOR INDEX topic_embedding_ns FOR $vector
                 WHERE n.namespace = $namespace LIMIT $fetch)
  RETURN n
} END AS found
WITH exact, size(found) AS raw, COLLECT {
  UNWIND found AS n
  WITH n WHERE n.archived_at IS NULL
    AND ($since IS NULL OR n.last_seen_at >= datetime($since))
    AND ($until IS NULL OR n.first_seen_at < datetime($until))
  WITH n ORDER BY vector.similarity.cosine(n.embedding, $vector) DESC, n.name, n.first_seen_at,
    n.topic_id LIMIT $k
  RETURN n
} AS kept
WITH exact, raw, kept, NOT exact AND size(kept) < $k AND raw >= $fetch AS short
WITH exact, raw, kept, short, CASE WHEN short THEN size(COLLECT {
  MATCH (t:Topic) WHERE t.namespace = $namespace AND t.last_seen_at >= datetime($scan_since)
  RETURN 1 AS one LIMIT $scan_max + 1
}) ELSE 0 END AS window_size
WITH exact, raw, kept, short AND window_size > $scan_max AS again,
  exact OR (short AND window_size <= $scan_max) AS scan
WITH kept, again, scan, CASE WHEN again THEN COLLECT {
  MATCH (n:Topic)
    SEARCH n IN (VECTOR INDEX topic_embedding_ns FOR $vector
                 WHERE n.namespace = $namespace LIMIT $fetch_more)
  RETURN n
} ELSE [] END AS more, raw
WITH CASE WHEN again THEN size(more) ELSE raw END AS raw, scan, again, CASE WHEN again
  THEN COLLECT {
    UNWIND more AS n
    WITH n WHERE n.archived_at IS NULL
      AND ($since IS NULL OR n.last_seen_at >= datetime($since))
      AND ($until IS NULL OR n.first_seen_at < datetime($until))
    WITH n ORDER BY vector.similarity.cosine(n.embedding, $vector) DESC, n.name, n.first_seen_at,
    n.topic_id LIMIT $k
    RETURN n
  }
  ELSE kept END AS kept
WITH raw, kept, scan OR (again AND size(kept) < $k AND raw >= $fetch_more) AS scanned
WITH raw, scanned, CASE WHEN scanned THEN COLLECT {
  MATCH (t:Topic)
  WHERE t.namespace = $namespace AND t.last_seen_at >= datetime($scan_since)
    AND t.embedding IS NOT NULL AND t.archived_at IS NULL
    AND ($until IS NULL OR t.first_seen_at < datetime($until))
  WITH t ORDER BY vector.similarity.cosine(t.embedding, $vector) DESC, t.name, t.first_seen_at,
    t.topic_id LIMIT $k
  RETURN t
} ELSE kept END AS chosen
UNWIND (CASE WHEN size(chosen) = 0 THEN [null] ELSE chosen END) AS n
WITH raw, scanned, n, CASE WHEN n IS NULL THEN null
                           ELSE vector.similarity.cosine(n.embedding, $vector) END AS score
ORDER BY score DESC, n.name, n.first_seen_at, n.topic_id
WITH raw, scanned, collect(CASE WHEN n IS NULL THEN null
  ELSE {t: CASE WHEN $light
       THEN n {.topic_id, .namespace, .schema_version, .name, .one_liner, .aliases,
               first_seen_at: toString(n.first_seen_at), last_seen_at: toString(n.last_seen_at),
               .numbers_json, .open_loops_json, .skill_refs, .artifact_refs, .embedding_model,
               .embedding_hash, .embedding_dimensions, .utility_score, .decay_bucket,
               .touch_count, .correction_count, .constraint_count, .usage_count,
               last_used_at: toString(n.last_used_at), .version,
               archived_at: toString(n.archived_at)}
       ELSE n {.*, embedding: null} END, score: score} END) AS hits
WITH raw, scanned, hits, [h IN hits | h.t.topic_id] AS found
RETURN raw, scanned, hits, COLLECT {
  UNWIND range(0, size($topic_ids) - 1) AS i
  WITH i WHERE NOT $topic_ids[i] IN found
  MATCH (t:Topic {namespace: $namespace, topic_id: $topic_ids[i]})
  WITH i, CASE WHEN $light
    THEN t {.topic_id, .namespace, .schema_version, .name, .one_liner, .aliases,
            first_seen_at: toString(t.first_seen_at), last_seen_at: toString(t.last_seen_at),
            .numbers_json, .open_loops_json, .skill_refs, .artifact_refs, .embedding_model,
            .embedding_hash, .embedding_dimensions, .utility_score, .decay_bucket,
            .touch_count, .correction_count, .constraint_count, .usage_count,
            last_used_at: toString(t.last_used_at), .version,
            archived_at: toString(t.archived_at)}
    ELSE t {.*, embedding: null} END AS t
  ORDER BY i
  RETURN t
} AS topics
