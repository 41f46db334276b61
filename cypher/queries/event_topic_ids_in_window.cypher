// The topics with at least one event in [$since, $until): ids only. Deep retrieval boosts
// those topics; returning whole events for that (up to 1,000 maps, mapped to models in Python)
// cost ~3x as much at 100k topics ("last week": 773 events).
// params: $namespace, $since: datetime, $until: datetime (the store gives both bounds, so the
//         (namespace, at) index is seeked), $limit: int (most topics returned)
// returns one row (a row per item cost the driver ~20 us of Python each, docs/performance.md): topic_ids: list<string>
MATCH (e:TopicEvent)
WHERE e.namespace = $namespace AND e.at >= $since AND e.at < $until
WITH DISTINCT e.topic_id AS topic_id LIMIT $limit
RETURN collect(topic_id) AS topic_ids
