// Full-text (Lucene) search over name, aliases and one-liner, filtered to a namespace and window.
// params: $query (Lucene syntax, escaped), $fetch: int, $k: int, $namespace,
//         $since: datetime | null, $until: datetime | null
// $light: true leaves out facts, facts_json and notable_events_json (search results stay small).
// returns: raw (hits before filtering), hits: list<{t: map, score: float}>
CALL db.index.fulltext.queryNodes('topic_text', $query, {limit: $fetch}) YIELD node, score
WITH collect({node: node, score: score}) AS hits_all
WITH size(hits_all) AS raw,
  [h IN hits_all WHERE h.node.namespace = $namespace AND h.node.archived_at IS NULL
     AND ($since IS NULL OR h.node.last_seen_at >= $since)
     AND ($until IS NULL OR h.node.first_seen_at < $until)][0..$k] AS kept
UNWIND (CASE WHEN size(kept) = 0 THEN [null] ELSE kept END) AS h
WITH raw, h.node AS n, h.score AS score
RETURN raw, collect(CASE WHEN n IS NULL THEN null
                    ELSE {t: n {.*, embedding: null, facts: CASE WHEN $light THEN null ELSE n.facts END, facts_json: CASE WHEN $light THEN null ELSE n.facts_json END, notable_events_json: CASE WHEN $light THEN null ELSE n.notable_events_json END}, score: score} END) AS hits
