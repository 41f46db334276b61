// Events of some topics, oldest first.
// params: $namespace, $topic_ids   returns: e (map, no embedding)
MATCH (e:TopicEvent {namespace: $namespace})
WHERE e.topic_id IN $topic_ids
RETURN e {.*, embedding: null} AS e ORDER BY e.at
