// Hard-delete topics with their events and every relationship (edges, mentions, subjects'
// TOUCHED, wake packets' TOP_TOPIC, skill runs' USED_TOPIC). The vector and full-text indexes
// drop the nodes in the same transaction.
// params: $namespace, $topic_ids: list<string>
// returns: topics (count), events (count)
// moves the namespace's TopicStamp first (graph/topic_vectors.py: a worker's copy of the
// namespace's topic vectors serves no search after this write)
CALL () {
  MERGE (stamp:TopicStamp {namespace: $namespace}) SET stamp.epoch = randomUUID()
}
MATCH (t:Topic {namespace: $namespace})
WHERE t.topic_id IN $topic_ids
OPTIONAL MATCH (e:TopicEvent {namespace: $namespace})
WHERE e.topic_id = t.topic_id
WITH collect(DISTINCT t) AS topics, collect(DISTINCT e) AS events
FOREACH (e IN events | DETACH DELETE e)
FOREACH (t IN topics | DETACH DELETE t)
RETURN size(topics) AS topics, size(events) AS events
