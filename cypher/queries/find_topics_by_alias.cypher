// Exact, case-insensitive alias or name lookup.
// params: $namespace, $alias (lower-cased), $include_archived: bool
// returns: t (map, no embedding)
MATCH (t:Topic {namespace: $namespace})
WHERE ($alias IN t.aliases_lc OR t.name_lc = $alias)
  AND ($include_archived OR t.archived_at IS NULL)
RETURN t {.*, embedding: null} AS t
ORDER BY t.last_seen_at DESC
