// How many nodes of each label a namespace holds (API keys left out, and labels it has none of).
// Label by label (every label whose nodes carry a namespace; tests/unit/test_namespace_labels.py
// checks the list against the queries that create nodes), each read through its namespace index
// (cypher/schema/018_namespace_indexes.cypher and earlier): only this namespace's nodes are read,
// where matching every node and filtering on n.namespace read every tenant's (~0.7 us a node).
// params: $namespace
// returns: label, n
CALL () {
  MATCH (n:Topic) WHERE n.namespace = $namespace RETURN 'Topic' AS label, count(n) AS n
  UNION ALL
  MATCH (n:TopicEvent) WHERE n.namespace = $namespace RETURN 'TopicEvent' AS label, count(n) AS n
  UNION ALL
  MATCH (n:Message) WHERE n.namespace = $namespace RETURN 'Message' AS label, count(n) AS n
  UNION ALL
  MATCH (n:Passage) WHERE n.namespace = $namespace RETURN 'Passage' AS label, count(n) AS n
  UNION ALL
  MATCH (n:PassageStamp) WHERE n.namespace = $namespace RETURN 'PassageStamp' AS label, count(n) AS n
  UNION ALL
  MATCH (n:TopicStamp) WHERE n.namespace = $namespace RETURN 'TopicStamp' AS label, count(n) AS n
  UNION ALL
  MATCH (n:Conversation) WHERE n.namespace = $namespace RETURN 'Conversation' AS label, count(n) AS n
  UNION ALL
  MATCH (n:Subject) WHERE n.namespace = $namespace RETURN 'Subject' AS label, count(n) AS n
  UNION ALL
  MATCH (n:Skill) WHERE n.namespace = $namespace RETURN 'Skill' AS label, count(n) AS n
  UNION ALL
  MATCH (n:SkillRun) WHERE n.namespace = $namespace RETURN 'SkillRun' AS label, count(n) AS n
  UNION ALL
  MATCH (n:WakePacket) WHERE n.namespace = $namespace RETURN 'WakePacket' AS label, count(n) AS n
  UNION ALL
  MATCH (n:WakeState) WHERE n.namespace = $namespace RETURN 'WakeState' AS label, count(n) AS n
  UNION ALL
  MATCH (n:SleepLease) WHERE n.namespace = $namespace RETURN 'SleepLease' AS label, count(n) AS n
  UNION ALL
  MATCH (n:SleepRun) WHERE n.namespace = $namespace RETURN 'SleepRun' AS label, count(n) AS n
  UNION ALL
  MATCH (n:SuppressionSession) WHERE n.namespace = $namespace RETURN 'SuppressionSession' AS label, count(n) AS n
}
WITH label, n WHERE n > 0
RETURN label, n
ORDER BY label
