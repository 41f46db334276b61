// The live topics of one namespace whose facts hold (or held) one of some states of a life
// (the topic_states keyword index: cypher/schema/019_topic_states.cypher), most recently seen
// first. Lucene hands over at most $fetch of them (a bound: a key is held by a few topics of a
// namespace, however many it has), ordered here and cut to $limit.
// params: $namespace, $lucene (graph/fulltext.py state_query: the namespace's token AND any of
//         the state tokens), $fetch, $limit
// returns: topic_id, state_keys (the tokens the topic holds)
CALL db.index.fulltext.queryNodes('topic_states', $lucene, {limit: $fetch}) YIELD node
WITH node AS t
WHERE t.namespace = $namespace AND t.archived_at IS NULL
RETURN t.topic_id AS topic_id, t.state_keys AS state_keys
ORDER BY t.last_seen_at DESC, t.topic_id
LIMIT $limit
