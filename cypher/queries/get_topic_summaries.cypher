// Topics by id without their heavy JSON lists (what a context needs to title and date them),
// with the message ids the one-liner came from; the topics in $full_ids come whole (facts,
// numbers, open loops, events), so a context reads its candidates in one round trip.
// params: $namespace, $topic_ids, $full_ids (a subset of $topic_ids, may be empty)
// returns: t (map), one_liner_sources (list<string>)
UNWIND $topic_ids AS id
MATCH (t:Topic {topic_id: id, namespace: $namespace})
WITH t, id IN $full_ids AS whole
RETURN t {.*, embedding: null,
          facts: CASE WHEN whole THEN t.facts ELSE null END,
          facts_json: CASE WHEN whole THEN t.facts_json ELSE null END,
          notable_events_json: CASE WHEN whole THEN t.notable_events_json ELSE null END,
          numbers_json: CASE WHEN whole THEN t.numbers_json ELSE null END,
          open_loops_json: CASE WHEN whole THEN t.open_loops_json ELSE null END} AS t,
       coalesce(t.one_liner_source_ids, []) AS one_liner_sources
