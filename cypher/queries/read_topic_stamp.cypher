// A namespace's TopicStamp and how many topics it holds (archived ones included), up to
// $cap + 1 (a seek of its namespace index that stops there): read first when a worker reads
// its copy of the namespace's topic vectors (graph/topic_vectors.py), so the rows read after it
// are at least as new as the stamp.
// params: $namespace, $cap: int
// returns: epoch (null: no stamp), n
CYPHER 25
OPTIONAL MATCH (s:TopicStamp {namespace: $namespace})
RETURN s.epoch AS epoch, size(COLLECT {
  MATCH (t:Topic) WHERE t.namespace = $namespace RETURN 1 AS one LIMIT $cap + 1
}) AS n
