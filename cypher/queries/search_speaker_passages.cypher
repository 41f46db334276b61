// The passages of what some participants of one namespace's conversation said, nearest a
// vector: a question naming a person ("What activities does Melanie partake in?") is answered
// by that person's own turns, said across every session and filed under many topics ("I'm off
// to go swimming with the kids", "I just signed up for a pottery class"), which the
// namespace-wide passage search ranks below other people's sentences of the same words. Exact
// cosine over the passages of each speaker's newest $per_speaker messages, found through the
// (namespace, speaker_lc) index: no vector index, no other tenant's node read.
// params: $namespace, $speakers: list<string> (lower-cased speaker names), $vector: list<float>,
//         $k: int, $per_speaker: int, $until: ISO datetime text | null (only messages said
//         before it)
// returns: hits: list<{m: map, text, score: cosine, topics: list<{topic_id, name}> by name}>,
//          best first (the shape of search_passages_vector's)
CYPHER 25
UNWIND $speakers AS name
CALL (name) {
  MATCH (m:Message) USING INDEX m:Message(namespace, speaker_lc)
  WHERE m.namespace = $namespace AND m.speaker_lc = name
    AND ($until IS NULL OR m.at < datetime($until))
  WITH m ORDER BY m.at DESC, m.seq DESC, m.message_id LIMIT $per_speaker
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
