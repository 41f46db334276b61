// Delete every node of one namespace except its API keys (which are revoked, not deleted, so
// the audit trail stays). Runs in batches, so it needs an auto-commit transaction (session.run).
// params: $namespace
// returns: nothing
MATCH (n) WHERE n.namespace = $namespace AND NOT n:ApiKey
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS
