// How much of the shared topic vector index one namespace holds: every Topic node (the label's
// count, read from the count store: no scan) and the namespace's (a seek of its index).
// Sizes the first fetch of a crowded namespace's vector search (graph/index_share.py).
// params: $namespace   returns: total, own
MATCH (t:Topic)
WITH count(t) AS total
RETURN total, COUNT { MATCH (t:Topic) WHERE t.namespace = $namespace } AS own
