// Full-text candidates of one namespace over name, aliases, one-liner and gist. $query is confined to
// the namespace before Lucene ranks (graph/fulltext.py: ns_token clause), so other namespaces
// cannot push these topics out of the $fetch window; archive and time-window filters run after.
// $query's clauses score constants (graph/fulltext.py pool_query): a topic's score depends on
// it and the query alone, and when Lucene returned $fetch rows (there may be more) the rows of
// the last row's score are dropped: which of the topics of that score made the window follows
// Lucene's document order, which every tenant's writes move; the rows of a higher score are
// every topic of the namespace scoring that high. Ranking happens in graph/lexical.py with
// the namespace's own statistics.
// params: $query (Lucene syntax, escaped, namespace-confined), $fetch: int, $namespace,
//         $since: datetime | null, $until: datetime | null
// returns: raw (hits Lucene returned), hits: list<{topic_id, name, alias_text, one_liner, gist,
//          utility_score, first_seen_at, last_seen_at (ISO text), score (Lucene's constant
//          score)}> in Lucene's order: the fields the ranking reads, and those a search scores
//          a topic by (graph/topics.py ranked_topics with partial: a context scores its
//          full-text candidates without reading them by id, docs/performance.md, eleventh pass)
CALL db.index.fulltext.queryNodes('topic_text', $query, {limit: $fetch}) YIELD node, score
WITH collect({n: node, s: score}) AS found
WITH found, CASE WHEN size(found) >= $fetch THEN found[-1].s ELSE -1.0 END AS cut
RETURN size(found) AS raw,
  [h IN found WHERE h.s > cut AND h.n.namespace = $namespace AND h.n.archived_at IS NULL
     AND ($since IS NULL OR h.n.last_seen_at >= $since)
     AND ($until IS NULL OR h.n.first_seen_at < $until)
   | {topic_id: h.n.topic_id, name: h.n.name, alias_text: h.n.alias_text,
      one_liner: h.n.one_liner, gist: coalesce(h.n.gist, ''), utility_score: h.n.utility_score,
      first_seen_at: toString(h.n.first_seen_at), last_seen_at: toString(h.n.last_seen_at),
      score: h.s}]
  AS hits
