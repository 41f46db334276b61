// The cosine of a vector to the passages of the messages some topics cite, per message: what topic
// search's best-fact signal reads of its best candidates (retrieval/fact_rank.py). The same
// messages and passages as search_topic_passages.cypher (each topic's newest $per_topic cited
// messages, of $namespace only, no index), its best $k passages kept, but only each message's id
// and its best passage's score come back: no message maps, no topics of each hit.
// params: $namespace, $topic_ids: list<string>, $vector: list<float>, $k: int, $per_topic: int
// returns: hits: list<{message_id, score: the best kept passage's similarity}>, best first
CYPHER 25
MATCH (t:Topic {namespace: $namespace})
WHERE t.topic_id IN $topic_ids AND t.archived_at IS NULL
CALL (t) {
  MATCH (t)-[:MENTIONED_IN]->(m:Message {namespace: $namespace})
  WITH m ORDER BY m.at DESC, m.seq DESC, m.message_id LIMIT $per_topic
  RETURN m
}
WITH DISTINCT m
MATCH (m)-[:HAS_PASSAGE]->(p:Passage)
WITH m, p, vector.similarity.cosine(p.embedding, $vector) AS score
ORDER BY score DESC, p.at, p.seq, p.message_id
LIMIT $k
WITH m.message_id AS message_id, max(score) AS score
ORDER BY score DESC, message_id
RETURN collect({message_id: message_id, score: score}) AS hits
