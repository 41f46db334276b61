// The stored vectors of some topics of one namespace (what a sleep blends a changed topic's
// new vector from: sleepwake.sleep.blend). Topics without a vector are left out.
// params: $namespace: string, $topic_ids: list<string>
// returns: topic_id (string), vector (list<float>)
UNWIND $topic_ids AS id
MATCH (t:Topic {topic_id: id, namespace: $namespace})
WHERE t.embedding IS NOT NULL
RETURN t.topic_id AS topic_id, t.embedding AS vector
