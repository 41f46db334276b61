// Hard-delete messages of a namespace (and their MENTIONED_IN edges), with their passages.
// params: $namespace, $message_ids: list<string>
// returns: deleted (count)
// Removing passages draws a new epoch of the namespace's PassageStamp: an API worker's cached
// passage vectors (graph/passage_vectors.py) are read again whole before they serve a search.
UNWIND $message_ids AS id
MATCH (m:Message {message_id: id, namespace: $namespace})
CALL (m) {
  OPTIONAL MATCH (m)-[:HAS_PASSAGE]->(p:Passage)
  DETACH DELETE p
  RETURN count(p) AS passages
}
DETACH DELETE m
WITH count(*) AS deleted, sum(passages) AS passages
CALL (passages) {
  WITH passages WHERE passages > 0
  MERGE (s:PassageStamp {namespace: $namespace})
  SET s.epoch = randomUUID(), s.gen = coalesce(s.gen, 0)
}
RETURN deleted
