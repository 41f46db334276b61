// Revoke every live API key of a namespace (idempotent; the first revocation time is kept).
// params: $namespace, $now: datetime
// returns: k (map) for each key of the namespace
MATCH (k:ApiKey {namespace: $namespace})
SET k.revoked = true, k.revoked_at = coalesce(k.revoked_at, $now)
RETURN k {.*} AS k
