// 1-hop neighbours of several topics over the given edge types, within the namespace,
// strongest edges first, at most $limit per seed (sliced before anything is projected). Equal
// weights go by the neighbour's name, id and the edge's type, never in the store's order of
// a node's relationships, which other tenants' writes and deletes move (docs/security.md).
// params: $namespace, $topic_ids: list<string>, $types: list<string>, $limit: int,
//         $light: bool
// $light: true reads only the fields a search result shows (those topic_from_props reads,
// without facts and events; not the lower-cased and full-text copies, created/updated times or
// the vector; times as ISO text, parsed by graph/mapping.py: no driver temporal decoding,
// docs/performance.md); false: the whole topic.
// returns one row (a row per item cost the driver ~20 us of Python each, docs/performance.md): neighbours: list<{seed_id, t (map, no embedding), type, weight,
//          outgoing (edge points seed -> t)}>, each seed's strongest first
UNWIND $topic_ids AS seed_id
MATCH (s:Topic {topic_id: seed_id})-[r]-(t:Topic)
WHERE s.namespace = $namespace AND t.namespace = $namespace
  AND type(r) IN $types AND t.archived_at IS NULL
WITH seed_id, s, t, r ORDER BY r.weight DESC, t.name, t.topic_id, type(r), startNode(r) = s
WITH seed_id, s, collect({t: t, r: r})[0..$limit] AS top
UNWIND top AS x
WITH seed_id, s, x.t AS t, x.r AS r
RETURN collect({seed_id: seed_id,
       t: CASE WHEN $light
         THEN t {.topic_id, .namespace, .schema_version, .name, .one_liner, .aliases,
                 first_seen_at: toString(t.first_seen_at),
                 last_seen_at: toString(t.last_seen_at), .numbers_json, .open_loops_json,
                 .skill_refs, .artifact_refs, .embedding_model, .embedding_hash,
                 .embedding_dimensions, .utility_score, .decay_bucket, .touch_count,
                 .correction_count, .constraint_count, .usage_count,
                 last_used_at: toString(t.last_used_at), .version,
                 archived_at: toString(t.archived_at)}
         ELSE t {.*, embedding: null} END,
       type: type(r), weight: r.weight, outgoing: startNode(r) = s}) AS neighbours
