// Every passage of a namespace with its vector, for an API worker's memory
// (graph/passage_vectors.py): its key (message id, seq), its time in microseconds since the
// epoch and its embedding. Read after read_passage_stamp.cypher.
// params: $namespace
// returns: one row a passage: message_id, seq, at_us, embedding
CYPHER 25
MATCH (p:Passage)
WHERE p.namespace = $namespace
RETURN p.message_id AS message_id, p.seq AS seq,
       p.at.epochSeconds * 1000000 + p.at.microsecond AS at_us, p.embedding AS embedding
