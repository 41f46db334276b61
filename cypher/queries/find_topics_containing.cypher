// Topics whose name, aliases, one-liner, facts or open loops contain a lower-cased needle
// (a scan of the namespace; forget's search must be complete, not ranked).
// params: $namespace, $needle (lower-cased, non-empty), $limit
// returns: t (map, no embedding)
MATCH (t:Topic {namespace: $namespace})
WHERE toLower(t.name) CONTAINS $needle
   OR toLower(coalesce(t.alias_text, '')) CONTAINS $needle
   OR toLower(coalesce(t.one_liner, '')) CONTAINS $needle
   OR toLower(coalesce(t.facts_json, '')) CONTAINS $needle
   OR toLower(coalesce(t.open_loops_json, '')) CONTAINS $needle
RETURN t {.*, embedding: null} AS t
ORDER BY t.topic_id
LIMIT $limit
