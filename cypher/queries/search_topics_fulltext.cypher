// Full-text candidates of one namespace over name, aliases, one-liner and gist. $query is confined to
// the namespace before Lucene ranks (graph/fulltext.py: ns_token clause), so other namespaces
// cannot push these topics out of the $fetch window; archive and time-window filters run after.
// Ranking happens in graph/lexical.py with the namespace's own statistics.
// params: $query (Lucene syntax, escaped, namespace-confined), $fetch: int, $namespace,
//         $since: datetime | null, $until: datetime | null
// returns: raw (hits Lucene returned), hits: list<{topic_id, name, alias_text, one_liner, gist,
//          utility_score, first_seen_at, last_seen_at (ISO text)}> in Lucene's order: the fields
//          the ranking reads, and those a search scores a topic by (graph/topics.py
//          ranked_topics with partial: a context scores its full-text candidates without
//          reading them by id, docs/performance.md, eleventh pass)
CALL db.index.fulltext.queryNodes('topic_text', $query, {limit: $fetch}) YIELD node
WITH collect(node) AS found
RETURN size(found) AS raw,
  [n IN found WHERE n.namespace = $namespace AND n.archived_at IS NULL
     AND ($since IS NULL OR n.last_seen_at >= $since)
     AND ($until IS NULL OR n.first_seen_at < $until)
   | {topic_id: n.topic_id, name: n.name, alias_text: n.alias_text, one_liner: n.one_liner,
      gist: coalesce(n.gist, ''), utility_score: n.utility_score, first_seen_at: toString(n.first_seen_at),
      last_seen_at: toString(n.last_seen_at)}]
  AS hits
