// The topics with an event whose time falls in [$since, $until): what a windowed topic search
// boosts. Both bounds are given (graph/events.py passes the ends of time for an open side), so
// the (namespace, at) index is seeked: "$since IS NULL OR ..." made the planner scan every
// TopicEvent of every namespace (5,824 database hits for 206 ids, docs/performance.md). Ids only.
// params: $namespace, $since, $until (datetimes), $limit: int (at most this many topic ids)
// returns: topic_id
MATCH (e:TopicEvent)
WHERE e.namespace = $namespace AND e.at >= $since AND e.at < $until
RETURN DISTINCT e.topic_id AS topic_id LIMIT $limit
