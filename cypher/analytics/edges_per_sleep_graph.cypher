// edges_per_sleep_graph: the topic-to-topic edges one sleep formed, as a graph (Browser Graph view).
//
// The edges whose created_at is $slept_at (a formed_at value from edges_per_sleep), with the
// topics they join; with $slept_at null, those of the namespace's latest sleep. In the table
// view and the CLI each row is a path of one edge. Instants are compared, so any zone will do:
// datetime('2026-03-02T10:00:00Z') and datetime('2026-03-02T11:00:00+01:00') find the same sleep.
//
// params:
//   $namespace  string                 the memory namespace
//   $slept_at   datetime = null        the sleep (null: the latest)
// returns: path
//
// Neo4j Browser:
//   :param namespace => 'demo'
//   :param slept_at => null
OPTIONAL MATCH (w:WakePacket {namespace: $namespace})
WITH coalesce($slept_at, max(w.slept_at)) AS at
MATCH path = (a:Topic {namespace: $namespace})-[r:RELATES_TO|DEPENDS_ON|PART_OF|NEXT|PREV]->
             (b:Topic {namespace: $namespace})
WHERE r.created_at.epochSeconds = at.epochSeconds AND r.created_at.nanosecond = at.nanosecond
RETURN path
ORDER BY type(r), a.name, b.name
