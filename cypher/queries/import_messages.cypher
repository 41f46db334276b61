// Import messages (create only: an existing id is left as it is) and move the namespace's
// next seq past them.
// A created message is marked passages_pending: its passages are made again from the text as
// stored, never read from the file (graph/passages.py).
// params: $namespace, $rows: list<map> (message properties, seq included), $next_seq: int
// returns: created (count)
MERGE (c:Conversation {namespace: $namespace})
ON CREATE SET c.next_seq = 0
SET c._lock = true
REMOVE c._lock
SET c.next_seq = CASE WHEN c.next_seq < $next_seq THEN $next_seq ELSE c.next_seq END
WITH c
UNWIND $rows AS row
MERGE (m:Message {message_id: row.message_id})
ON CREATE SET m = row, m.namespace = $namespace, m.passages_pending = true
RETURN count(m) AS created
