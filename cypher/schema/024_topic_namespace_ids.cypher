// Export pages a namespace's topics by id (export_topics, export_edges: `topic_id > $after_id`
// in id order). Without an index on both, the planner either sought the unique topic_id index
// from the cursor and filtered by namespace (every tenant's topics after the cursor read) or,
// beside many small tenants, read the whole namespace for every page and kept the first
// $limit (docs/performance.md, "The neighbourhood"). This one serves a page in its order.
CREATE INDEX topic_namespace_id IF NOT EXISTS FOR (t:Topic) ON (t.namespace, t.topic_id);
