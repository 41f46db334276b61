// Write the passages of messages (text/passages.py, from the text as stored: redacted) with
// their vectors, replacing any older ones, and clear passages_pending. A message deleted
// meanwhile, or whose text changed since it was read, is left as it is (nothing written).
// params: $rows: list<{namespace, message_id, content, passages: list<{text, embedding}>}>
// The message's write lock is taken before passages_pending is read, so two workers writing
// the same message write it once. Each message written bumps its namespace's PassageStamp
// (`gen` + 1, its passages marked with that `gen`; a new `epoch` when older passages were
// replaced): an API worker's cached passage vectors serve a search only under the stamp they
// were loaded with (graph/passage_vectors.py). The stamp is locked after the message, as
// delete_messages.cypher does.
// returns: written (messages written)
UNWIND $rows AS row
MATCH (m:Message {namespace: row.namespace, message_id: row.message_id})
SET m._lock = true
REMOVE m._lock
WITH m, row
WHERE m.passages_pending = true AND m.content = row.content
CALL (m) {
  OPTIONAL MATCH (m)-[:HAS_PASSAGE]->(old:Passage)
  DETACH DELETE old
  RETURN count(old) AS replaced
}
REMOVE m.passages_pending
WITH m, row, replaced
MERGE (s:PassageStamp {namespace: m.namespace})
  ON CREATE SET s.epoch = randomUUID(), s.gen = 0
SET s.gen = s.gen + 1,
    s.epoch = CASE WHEN replaced > 0 THEN randomUUID() ELSE s.epoch END
WITH m, row, s.gen AS gen
CALL (m, row, gen) {
  UNWIND range(0, size(row.passages) - 1) AS i
  CREATE (p:Passage {namespace: m.namespace, message_id: m.message_id, seq: i, at: m.at})
  SET p.text = row.passages[i].text, p.embedding = row.passages[i].embedding, p.gen = gen
  CREATE (m)-[:HAS_PASSAGE]->(p)
}
RETURN count(m) AS written
