// Which of some phrases the memory knows as a topic name or alias (full-text phrase lookup,
// then exact comparison), e.g. to tell a reintroduced entity from a new one.
// params: $namespace, $lucene (phrase query over name and alias_text), $names (lower-cased)
// returns: name (each known phrase once)
CALL db.index.fulltext.queryNodes('topic_text', $lucene, {limit: 200}) YIELD node
WITH node AS t
WHERE t.namespace = $namespace AND t.archived_at IS NULL
UNWIND $names AS name
WITH name, t
WHERE t.name_lc = name OR name IN t.aliases_lc
RETURN DISTINCT name
