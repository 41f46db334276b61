// Append messages to a namespace's conversation, allocating consecutive seq numbers.
// The lock property serialises concurrent appends on the Conversation node.
// params: $namespace, $rows: list<map> (message properties without seq)
// returns: message_id, seq
MERGE (c:Conversation {namespace: $namespace})
ON CREATE SET c.next_seq = 0
SET c._lock = true
REMOVE c._lock
WITH c, c.next_seq AS base
SET c.next_seq = base + size($rows)
WITH base
UNWIND range(0, size($rows) - 1) AS i
CREATE (m:Message)
SET m = $rows[i], m.seq = base + i
RETURN m.message_id AS message_id, m.seq AS seq
ORDER BY seq
