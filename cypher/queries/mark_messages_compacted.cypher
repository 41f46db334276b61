// Mark messages as compacted (they leave the buffer; they are never deleted).
// params: $namespace, $message_ids, $now   returns: marked (count)
UNWIND $message_ids AS id
MATCH (m:Message {message_id: id, namespace: $namespace})
WHERE m.compacted_at IS NULL
SET m.compacted_at = $now
RETURN count(m) AS marked
