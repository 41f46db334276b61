// Approximate vector search, over-fetched, then filtered to a namespace and time window
// (5.26 has no in-index filtering, so filters run after the index). The kept topics are scored
// exactly, as scan_topics_vector scores them, so a score does not depend on which path found
// the topic (the index's own score drifts by ~1e-4, and crowding by another namespace decides
// whether the index or the scan answers).
// params: $vector: list<float>, $fetch: int, $k: int, $namespace,
//         $since: datetime | null, $until: datetime | null
// $light: true leaves out facts, facts_json and notable_events_json (search results stay small).
// returns: raw (hits before filtering), hits: list<{t: map, score: float}>, best first;
//          score = (1 + cos) / 2
CALL db.index.vector.queryNodes('topic_embedding', $fetch, $vector) YIELD node
WITH collect(node) AS found
WITH size(found) AS raw,
  [n IN found WHERE n.namespace = $namespace AND n.archived_at IS NULL
     AND ($since IS NULL OR n.last_seen_at >= $since)
     AND ($until IS NULL OR n.first_seen_at < $until)][0..$k] AS kept
UNWIND (CASE WHEN size(kept) = 0 THEN [null] ELSE kept END) AS n
WITH raw, n, CASE WHEN n IS NULL THEN null
                  ELSE vector.similarity.cosine(n.embedding, $vector) END AS score
ORDER BY score DESC
RETURN raw, collect(CASE WHEN n IS NULL THEN null
                    ELSE {t: n {.*, embedding: null, facts: CASE WHEN $light THEN null ELSE n.facts END, facts_json: CASE WHEN $light THEN null ELSE n.facts_json END, notable_events_json: CASE WHEN $light THEN null ELSE n.notable_events_json END}, score: score} END) AS hits
