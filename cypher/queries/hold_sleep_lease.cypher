// Inside the sleep's commit: lock the lease and check that this sleep still holds it, so a
// sleep whose lease was taken over (its worker stalled past the lease) cannot commit. With
// $release the lease is given back in the same transaction (a sleep that took the lease itself:
// no separate release after the commit; should the commit fail, the lease stays held and the
// caller releases it).
// params: $namespace, $holder, $release: bool   returns: holder (no row: someone else's lease)
MATCH (l:SleepLease {namespace: $namespace})
SET l._lock = true
REMOVE l._lock
WITH l
WHERE l.holder = $holder
SET l.holder = CASE WHEN $release THEN null ELSE l.holder END,
    l.expires_at = CASE WHEN $release THEN null ELSE l.expires_at END
RETURN $holder AS holder
