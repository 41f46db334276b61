// Drop forgotten topic ids from the topic_ids of skill runs (USED_TOPIC edges went with the
// topics).
// params: $namespace, $topic_ids: list<string>
// returns: updated (count)
MATCH (r:SkillRun {namespace: $namespace})
WHERE any(id IN coalesce(r.topic_ids, []) WHERE id IN $topic_ids)
SET r.topic_ids = [id IN r.topic_ids WHERE NOT id IN $topic_ids]
RETURN count(r) AS updated
