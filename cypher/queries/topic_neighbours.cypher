// 1-hop neighbours of several topics over the given edge types, within the namespace,
// strongest edges first, at most $limit per seed (sliced before anything is projected).
// params: $namespace, $topic_ids: list<string>, $types: list<string>, $limit: int,
//         $light: bool (true leaves out facts, facts_json and notable_events_json)
// returns: seed_id, t (map, no embedding), type, weight, outgoing (edge points seed -> t)
UNWIND $topic_ids AS seed_id
MATCH (s:Topic {topic_id: seed_id})-[r]-(t:Topic)
WHERE s.namespace = $namespace AND t.namespace = $namespace
  AND type(r) IN $types AND t.archived_at IS NULL
WITH seed_id, s, t, r ORDER BY r.weight DESC
WITH seed_id, s, collect({t: t, r: r})[0..$limit] AS top
UNWIND top AS x
WITH seed_id, s, x.t AS t, x.r AS r
RETURN seed_id,
       t {.*, embedding: null,
          facts: CASE WHEN $light THEN null ELSE t.facts END,
          facts_json: CASE WHEN $light THEN null ELSE t.facts_json END,
          notable_events_json: CASE WHEN $light THEN null ELSE t.notable_events_json END} AS t,
       type(r) AS type, r.weight AS weight, startNode(r) = s AS outgoing
