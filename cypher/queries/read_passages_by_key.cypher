// The passages an API worker's copy of a namespace's vectors found nearest a vector
// (graph/passage_vectors.py), read by key within the namespace with their messages, and the
// namespace's PassageStamp, which says whether that copy was current: a passage removed since
// cannot be read here (it no longer exists in the namespace), and a stale copy's answer is
// dropped by the caller. The candidates are scored again here, by the cosine the exact scan in
// Cypher uses, and ordered as it orders them (equal scores: the older passage first), so the
// answer is the exact scan's (search_passages_vector.cypher).
// params: $namespace, $keys: list<{message_id, seq}>, $vector: list<float>, $k: int,
//         $until: ISO datetime text | null (only passages said before it)
// returns: epoch, gen (the stamp: see read_passage_stamp.cypher),
//          hits: list<{m: map, text, score, topics: list<{topic_id, name}> by name}>, best first
CYPHER 25
OPTIONAL MATCH (s:PassageStamp {namespace: $namespace})
WITH s.epoch AS epoch, coalesce(s.gen, 0) AS gen
CALL () {
  UNWIND $keys AS key
  MATCH (m:Message {namespace: $namespace, message_id: key.message_id})-[:HAS_PASSAGE]->(p:Passage)
  WHERE p.seq = key.seq AND p.namespace = $namespace
    AND ($until IS NULL OR p.at < datetime($until))
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
}
RETURN epoch, gen, hits
