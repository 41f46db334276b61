// Use-based lifecycle: topics that were packed into a context the model saw (not mere
// candidates) get last_used_at and usage_count. Usage fields are written only here.
// The ids are sorted before any node is matched and the rows are set in that order, so every
// request takes its topics' write locks in one global order: two requests marking the same
// topics wait for each other instead of deadlocking (they did in rank order, ~3% of the requests
// of 20 clients on one namespace).
// params: $namespace, $topic_ids, $now (ISO text: graph/db.py iso)   returns: marked (count)
UNWIND $topic_ids AS tid
WITH tid ORDER BY tid
MATCH (t:Topic {topic_id: tid, namespace: $namespace})
SET t.last_used_at = datetime($now), t.usage_count = coalesce(t.usage_count, 0) + 1
RETURN count(t) AS marked
