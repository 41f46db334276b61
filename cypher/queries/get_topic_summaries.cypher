// Topics by id without their heavy JSON lists (what a context needs to title and date them),
// with the message ids the one-liner came from.
// params: $namespace, $topic_ids   returns: t (map), one_liner_sources (list<string>)
UNWIND $topic_ids AS id
MATCH (t:Topic {topic_id: id, namespace: $namespace})
RETURN t {.*, embedding: null, facts: null, facts_json: null, notable_events_json: null,
          numbers_json: null, open_loops_json: null} AS t,
       coalesce(t.one_liner_source_ids, []) AS one_liner_sources
