// The passages of the messages some topics cite, nearest a vector: what the best topics of a
// question hold, ranked by meaning. A topic's facts are sentences of the turns it is
// MENTIONED_IN, and their passages carry the vectors; a question that shares no word with the
// fact that answers it ("What activities does Melanie partake in?" / "I'm off to go swimming
// with the kids") still finds it inside the topic the search found, where the namespace-wide
// passage search ranks it below sentences of unrelated turns. Exact cosine over the cited
// messages' passages only (a few hundred for the best topics; of a topic citing more than
// $per_topic messages, its newest $per_topic): no index, no other tenant read.
// params: $namespace, $topic_ids: list<string>, $vector: list<float>, $k: int,
//         $per_topic: int, $until: ISO datetime text | null (only messages said before it)
// returns: hits: list<{m: map, text, score: cosine, topics: list<{topic_id, name}> by name}>,
//          best first (the shape of search_passages_vector's)
CYPHER 25
MATCH (t:Topic {namespace: $namespace})
WHERE t.topic_id IN $topic_ids AND t.archived_at IS NULL
CALL (t) {
  MATCH (t)-[:MENTIONED_IN]->(m:Message {namespace: $namespace})
  WHERE $until IS NULL OR m.at < datetime($until)
  WITH m ORDER BY m.at DESC, m.seq DESC, m.message_id LIMIT $per_topic
  RETURN m
}
WITH DISTINCT m
MATCH (m)-[:HAS_PASSAGE]->(p:Passage)
WITH m, p, vector.similarity.cosine(p.embedding, $vector) AS score
ORDER BY score DESC, p.at, p.seq, p.message_id
LIMIT $k
RETURN collect({
  m: m {.*, at: toString(m.at), compacted_at: toString(m.compacted_at)}, text: p.text,
  score: score,
  topics: COLLECT {
    MATCH (t:Topic)-[:MENTIONED_IN]->(m) WHERE t.archived_at IS NULL
    WITH t ORDER BY t.name, t.topic_id
    RETURN {topic_id: t.topic_id, name: t.name}
  }}) AS hits
