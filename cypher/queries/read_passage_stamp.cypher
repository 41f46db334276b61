// A namespace's PassageStamp and how many passages it holds, up to $cap + 1 (a seek of its
// namespace index that stops there): read before its passages are loaded into an API worker's
// memory (graph/passage_vectors.py), so the rows read next are at least as new as the stamp.
// params: $namespace, $cap: int (0: the stamp alone)
// returns: epoch (text | null: no stamp node), gen (int), n (passages counted, at most $cap + 1)
CYPHER 25
OPTIONAL MATCH (s:PassageStamp {namespace: $namespace})
RETURN s.epoch AS epoch, coalesce(s.gen, 0) AS gen, size(COLLECT {
  MATCH (p:Passage) WHERE p.namespace = $namespace RETURN 1 AS one LIMIT $cap + 1
}) AS n
