// Revoke an API key by its public id (idempotent: the first revocation time is kept).
// params: $key_id: string, $now: datetime
// returns: k (map), or no row when no key has this id
MATCH (k:ApiKey {key_id: $key_id})
SET k.revoked = true, k.revoked_at = coalesce(k.revoked_at, $now)
RETURN k {.*} AS k
