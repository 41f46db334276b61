// Delete a few idle (expired) suppression sessions of a namespace, so abandoned sessions do not
// pile up: run after a session's first turn (each new session clears up to $sweep old ones), in
// a transaction of its own. It locks session nodes only, in session_id order, so two sweeps take
// their locks in the same order and never deadlock; a context's write holds one session's lock
// and asks for none after it, so a sweep that waits on it never closes a cycle.
// params: $namespace, $now (ISO text: graph/db.py iso), $sweep: int (sessions deleted at most)
// returns: swept: int (sessions deleted)
MATCH (old:SuppressionSession)
WHERE old.namespace = $namespace AND old.expires_at < datetime($now)
WITH old ORDER BY old.session_id LIMIT $sweep
DELETE old
RETURN count(*) AS swept
