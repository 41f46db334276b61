// The stored version of one topic (to tell "missing" from "conflict").
// params: $namespace, $topic_id   returns: version
MATCH (t:Topic {topic_id: $topic_id, namespace: $namespace})
RETURN t.version AS version
