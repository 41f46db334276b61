// Use-based lifecycle: topics that were packed into a context the model saw (not mere
// candidates) get last_used_at and usage_count. Usage fields are written only here.
// params: $namespace, $topic_ids, $now (ISO text: graph/db.py iso)   returns: marked (count)
UNWIND $topic_ids AS tid
MATCH (t:Topic {topic_id: tid, namespace: $namespace})
SET t.last_used_at = datetime($now), t.usage_count = coalesce(t.usage_count, 0) + 1
RETURN count(t) AS marked
