// Which of some phrases the memory knows as a topic name or alias (the keyword index of names
// and aliases, then exact comparison), e.g. to tell a reintroduced entity from a new one.
// params: $namespace, $lucene (graph/fulltext.py name_query), $names (lower-cased)
// returns: name (each known phrase once)
CALL db.index.fulltext.queryNodes('topic_names', $lucene, {limit: 200}) YIELD node
WITH node AS t
WHERE t.namespace = $namespace AND t.archived_at IS NULL
UNWIND $names AS name
WITH name, t
WHERE t.name_lc = name OR name IN t.aliases_lc
RETURN DISTINCT name
