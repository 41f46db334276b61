// Lock one topic and read it, for a read-modify-write (TopicStore.merge, PATCH /v1/topics).
// Neo4j reads are read-committed without snapshots: a plain read racing a commit can mix two
// versions of one node (a new `version` with an old `touch_count` was seen), and a compare-and-set
// against that version then writes the stale fields back. Holding the node's write lock while
// reading excludes any commit on it, so the properties read belong to one version.
// params: $namespace: string, $topic_id: string
// returns: t (map, no embedding), related (list<string>); no row when the topic is missing
MATCH (t:Topic {topic_id: $topic_id, namespace: $namespace})
SET t._lock = true
REMOVE t._lock
WITH t
OPTIONAL MATCH (t)-[:RELATES_TO]-(o:Topic {namespace: $namespace})
RETURN t {.*, embedding: null} AS t, collect(DISTINCT o.topic_id) AS related
