// API keys, optionally of one namespace, newest first (hashes included; callers drop them).
// params: $namespace: string | null (null = every namespace), $include_revoked: bool
// returns: k (map)
MATCH (k:ApiKey)
WHERE ($namespace IS NULL OR k.namespace = $namespace)
  AND ($include_revoked OR NOT k.revoked)
RETURN k {.*} AS k ORDER BY k.created_at DESC
