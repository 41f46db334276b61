// Write the passages of messages (text/passages.py, from the text as stored: redacted) with
// their vectors, replacing any older ones, and clear passages_pending. A message deleted
// meanwhile, or whose text changed since it was read, is left as it is (nothing written).
// params: $rows: list<{namespace, message_id, content, passages: list<{text, embedding}>}>
// The message's write lock is taken before passages_pending is read, so two workers writing
// the same message write it once.
// returns: written (messages written)
UNWIND $rows AS row
MATCH (m:Message {namespace: row.namespace, message_id: row.message_id})
SET m._lock = true
REMOVE m._lock
WITH m, row
WHERE m.passages_pending = true AND m.content = row.content
CALL (m) {
  MATCH (m)-[:HAS_PASSAGE]->(old:Passage)
  DETACH DELETE old
}
REMOVE m.passages_pending
WITH m, row
CALL (m, row) {
  UNWIND range(0, size(row.passages) - 1) AS i
  CREATE (p:Passage {namespace: m.namespace, message_id: m.message_id, seq: i, at: m.at})
  SET p.text = row.passages[i].text, p.embedding = row.passages[i].embedding
  CREATE (m)-[:HAS_PASSAGE]->(p)
}
RETURN count(m) AS written
