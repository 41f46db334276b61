// The passages of a namespace written after a stamp's gen (write_message_passages.cypher marks
// each with its write's gen), for an API worker's memory (graph/passage_vectors.py): a range
// seek of passage_namespace_gen (025). Read after read_passage_stamp.cypher.
// params: $namespace, $after: int (the gen the worker's copy holds)
// returns: one row a passage: message_id, seq, at_us, embedding
CYPHER 25
MATCH (p:Passage)
WHERE p.namespace = $namespace AND p.gen > $after
RETURN p.message_id AS message_id, p.seq AS seq,
       p.at.epochSeconds * 1000000 + p.at.microsecond AS at_us, p.embedding AS embedding
