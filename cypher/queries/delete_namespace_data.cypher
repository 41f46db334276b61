// Delete every node of one namespace except its API keys (which are revoked, not deleted, so
// the audit trail stays). Runs in batches, so it needs an auto-commit transaction (session.run).
// params: $namespace
// returns: nothing
// Label by label (every label whose nodes carry a namespace; tests/unit/test_namespace_labels.py
// checks the list against the queries that create nodes), each read through its namespace index
// (cypher/schema/018_namespace_indexes.cypher and earlier): only this namespace's nodes are read,
// where matching every node and filtering on n.namespace read every tenant's (~0.7 us a node).
CALL () {
  // the topic stamp first: a worker's copy of the topics serves nothing once the deletion began
  MATCH (n:TopicStamp) WHERE n.namespace = $namespace RETURN n
  UNION ALL
  MATCH (n:Topic) WHERE n.namespace = $namespace RETURN n
  UNION ALL
  MATCH (n:TopicEvent) WHERE n.namespace = $namespace RETURN n
  UNION ALL
  MATCH (n:Message) WHERE n.namespace = $namespace RETURN n
  UNION ALL
  MATCH (n:Passage) WHERE n.namespace = $namespace RETURN n
  UNION ALL
  MATCH (n:PassageStamp) WHERE n.namespace = $namespace RETURN n
  UNION ALL
  MATCH (n:Conversation) WHERE n.namespace = $namespace RETURN n
  UNION ALL
  MATCH (n:Subject) WHERE n.namespace = $namespace RETURN n
  UNION ALL
  MATCH (n:Skill) WHERE n.namespace = $namespace RETURN n
  UNION ALL
  MATCH (n:SkillRun) WHERE n.namespace = $namespace RETURN n
  UNION ALL
  MATCH (n:WakePacket) WHERE n.namespace = $namespace RETURN n
  UNION ALL
  MATCH (n:WakeState) WHERE n.namespace = $namespace RETURN n
  UNION ALL
  MATCH (n:SleepLease) WHERE n.namespace = $namespace RETURN n
  UNION ALL
  MATCH (n:SleepRun) WHERE n.namespace = $namespace RETURN n
  UNION ALL
  MATCH (n:SuppressionSession) WHERE n.namespace = $namespace RETURN n
}
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS
