// One page of a namespace's topic events for export, by id; the vector when asked.
// params: $namespace, $after_id: string ('' for the first page), $limit: int, $vectors: bool
// returns: e (map), vector (list<float> | null)
MATCH (e:TopicEvent {namespace: $namespace})
WHERE e.event_id > $after_id
WITH e ORDER BY e.event_id LIMIT $limit
RETURN e {.*, embedding: null} AS e,
       CASE WHEN $vectors THEN e.embedding ELSE null END AS vector
ORDER BY e.event_id
