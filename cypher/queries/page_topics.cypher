// One page of a namespace's live topics for the inspector, last seen first: those seen in
// [$since, $until) (the store passes far bounds for an open window, so the planner seeks the
// (namespace, last_seen_at) index) whose name or an alias contains $needle (lower case; null:
// every topic). $limit is the page size plus one, so the caller knows whether a next page exists.
// params: $namespace, $needle: string|null, $since: datetime, $until: datetime, $skip, $limit
// returns: t (map, no embedding), events (this topic's event count)
MATCH (t:Topic)
WHERE t.namespace = $namespace AND t.last_seen_at >= $since AND t.first_seen_at < $until
  AND t.archived_at IS NULL
  AND ($needle IS NULL OR t.name_lc CONTAINS $needle OR toLower(t.alias_text) CONTAINS $needle)
WITH t ORDER BY t.last_seen_at DESC, t.topic_id SKIP $skip LIMIT $limit
RETURN t {.*, embedding: null} AS t,
       COUNT { MATCH (e:TopicEvent) WHERE e.namespace = $namespace AND e.topic_id = t.topic_id } AS events
