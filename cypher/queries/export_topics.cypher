// One page of a namespace's topics for export (archived ones included), by id, with the ids
// of the messages each is MENTIONED_IN (in conversation order) and, when asked, its vector.
// params: $namespace, $after_id: string ('' for the first page), $limit: int, $vectors: bool
// returns: t (map, embedding only with $vectors), mentioned_in (list<string>)
// USING INDEX: the (namespace, topic_id) index (024) in its own order, whatever the planner's
// statistics say of the namespace's size (docs/performance.md, "The neighbourhood").
MATCH (t:Topic {namespace: $namespace})
USING INDEX t:Topic(namespace, topic_id)
WHERE t.topic_id > $after_id
WITH t ORDER BY t.namespace, t.topic_id LIMIT $limit
CALL (t) {
  OPTIONAL MATCH (t)-[:MENTIONED_IN]->(m:Message {namespace: $namespace})
  WITH m ORDER BY m.seq
  RETURN collect(m.message_id) AS mentioned_in
}
RETURN t {.*, embedding: CASE WHEN $vectors THEN t.embedding ELSE null END} AS t,
       mentioned_in
ORDER BY t.topic_id
