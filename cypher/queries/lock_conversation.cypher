// Lock a namespace's conversation for an append and read what the append must respect. Run in
// the append's transaction: the write lock on the Conversation node is held until it commits, so
// appends to one namespace serialise and these reads cannot go stale before the write.
// params: $namespace, $external_ids: list<string>, $message_ids: list<string>
// returns: next_seq (int), newest (datetime | null: the latest stored message time),
//          existing: list<map> (stored messages carrying one of $external_ids, oldest first),
//          taken: list<string> (those of $message_ids that some message already has)
// USING INDEX: beside many small tenants the planner reckons a namespace holds a few messages,
// takes the (namespace) index and sorts the whole conversation (docs/performance.md, "The neighbourhood").
MERGE (c:Conversation {namespace: $namespace})
ON CREATE SET c.next_seq = 0
SET c._lock = true
REMOVE c._lock
WITH c
CALL (c) {
  MATCH (m:Message {namespace: $namespace})
  USING INDEX m:Message(namespace, at)
  WHERE m.at IS NOT NULL
  WITH m ORDER BY m.namespace DESC, m.at DESC LIMIT 1  // the index's order, read backwards
  RETURN collect(m.at) AS newest
}
CALL (c) {
  UNWIND $external_ids AS xid
  MATCH (m:Message {namespace: $namespace, external_id: xid})
  WITH m ORDER BY m.seq
  RETURN collect(m {.*}) AS existing
}
RETURN c.next_seq AS next_seq, newest[0] AS newest, existing,
       [id IN $message_ids WHERE EXISTS { MATCH (:Message {message_id: id}) }] AS taken
