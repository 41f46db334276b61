// The API key with this hash, revoked or not (the caller decides).
// params: $key_hash: string (SHA-256 hex of the presented key)
// returns: k (map)
MATCH (k:ApiKey {key_hash: $key_hash})
RETURN k {.*} AS k
