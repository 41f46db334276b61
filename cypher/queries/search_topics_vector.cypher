// Nearest topics of one namespace: the vector index, over-fetched, then filtered to the
// namespace and time window (5.26 has no in-index filtering, so filters run after the index);
// when the filters kept fewer than $k while the index had more (another namespace crowds the
// index, or the namespace is small), an exact scan of the namespace in the same round trip (it
// cannot miss). Kept topics are scored exactly either way, so a score does not depend on which
// path found the topic (the index's own score drifts by ~1e-4).
// params: $vector: list<float>, $fetch: int, $k: int, $namespace,
//         $since: datetime | null, $until: datetime | null
// $light: true reads only the fields a search result shows (those topic_from_props reads,
// without facts and events; not the lower-cased and full-text copies, created/updated times or
// the vector; times as ISO text, parsed by graph/mapping.py: no driver temporal decoding,
// docs/performance.md); false: the whole topic.
// returns: raw (hits before filtering), scanned (the exact scan answered),
//          hits: list<{t: map, score: float}>, best first; score = (1 + cos) / 2
CALL db.index.vector.queryNodes('topic_embedding', $fetch, $vector) YIELD node
WITH collect(node) AS found
WITH size(found) AS raw,
  [n IN found WHERE n.namespace = $namespace AND n.archived_at IS NULL
     AND ($since IS NULL OR n.last_seen_at >= $since)
     AND ($until IS NULL OR n.first_seen_at < $until)][0..$k] AS kept
CALL {
  WITH raw, kept
  // an UNWIND of zero or one row, not a WHERE: the planner moved a WHERE's test after the
  // namespace's index seek, so every call read every topic of the namespace (10,001 database
  // hits for 10k topics) to throw them away; now the seek runs only when the scan is needed
  UNWIND (CASE WHEN size(kept) < $k AND raw >= $fetch THEN [true] ELSE [] END) AS needed
  MATCH (t:Topic {namespace: $namespace})
  WHERE t.embedding IS NOT NULL AND t.archived_at IS NULL
    AND ($since IS NULL OR t.last_seen_at >= $since)
    AND ($until IS NULL OR t.first_seen_at < $until)
  WITH t ORDER BY vector.similarity.cosine(t.embedding, $vector) DESC LIMIT $k
  RETURN collect(t) AS exact
}
WITH raw, size(kept) < $k AND raw >= $fetch AS scanned, kept, exact
WITH raw, scanned, CASE WHEN scanned THEN exact ELSE kept END AS chosen
UNWIND (CASE WHEN size(chosen) = 0 THEN [null] ELSE chosen END) AS n
WITH raw, scanned, n, CASE WHEN n IS NULL THEN null
                           ELSE vector.similarity.cosine(n.embedding, $vector) END AS score
ORDER BY score DESC
RETURN raw, scanned, collect(CASE WHEN n IS NULL THEN null
  ELSE {t: CASE WHEN $light
       THEN n {.topic_id, .namespace, .schema_version, .name, .one_liner, .aliases,
               first_seen_at: toString(n.first_seen_at), last_seen_at: toString(n.last_seen_at),
               .numbers_json, .open_loops_json, .skill_refs, .artifact_refs, .embedding_model,
               .embedding_hash, .embedding_dimensions, .utility_score, .decay_bucket,
               .touch_count, .correction_count, .constraint_count, .usage_count,
               last_used_at: toString(n.last_used_at), .version,
               archived_at: toString(n.archived_at)}
       ELSE n {.*, embedding: null} END, score: score} END) AS hits
