// Hard-delete messages of a namespace (and their MENTIONED_IN edges), with their passages.
// params: $namespace, $message_ids: list<string>
// returns: deleted (count)
UNWIND $message_ids AS id
MATCH (m:Message {message_id: id, namespace: $namespace})
CALL (m) {
  MATCH (m)-[:HAS_PASSAGE]->(p:Passage)
  DETACH DELETE p
}
DETACH DELETE m
RETURN count(*) AS deleted
