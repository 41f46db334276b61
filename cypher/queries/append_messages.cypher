// Append new messages to a namespace's conversation with consecutive seq numbers from $base.
// Runs after lock_conversation.cypher in the same transaction (which read $base = next_seq under
// the Conversation node's write lock and checked idempotency and time order).
// Every new message is marked passages_pending: its passages and their vectors are written
// off the append path (graph/passages.py, by the sleep worker).
// params: $namespace, $base: int, $rows: list<map> (message properties without seq)
// returns: message_id, seq
MATCH (c:Conversation {namespace: $namespace})
SET c.next_seq = $base + size($rows)
WITH c
UNWIND range(0, size($rows) - 1) AS i
CREATE (m:Message)
SET m = $rows[i], m.seq = $base + i, m.passages_pending = true
RETURN m.message_id AS message_id, m.seq AS seq
ORDER BY seq
