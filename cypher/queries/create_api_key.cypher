// Store a new API key (its hash, never the key itself).
// params: $props: map (key_id, key_hash, prefix, namespace, label, created_at, revoked)
// returns: k (map)
CREATE (k:ApiKey)
SET k = $props
RETURN k {.*} AS k
