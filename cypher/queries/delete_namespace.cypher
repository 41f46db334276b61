// Delete every node of one namespace, API keys included (demo and evaluation namespaces; a
// user's forget keeps the keys: delete_namespace_data.cypher). Runs in batches, so it needs an
// auto-commit transaction (session.run).
// $namespace: the namespace to drop. Returns nothing.
MATCH (n) WHERE n.namespace = $namespace
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS
