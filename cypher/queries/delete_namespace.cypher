// Delete every node of one namespace (demo and evaluation namespaces only; the product never
// hard-deletes memory). Runs in batches, so it needs an auto-commit transaction (session.run).
// $namespace: the namespace to drop. Returns nothing.
MATCH (n) WHERE n.namespace = $namespace
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS
