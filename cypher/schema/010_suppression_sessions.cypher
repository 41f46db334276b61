// Session suppression state (retrieval/suppression.py): one small node per (namespace, session),
// shared by every API worker. The constraint makes concurrent MERGEs of one session safe; the
// (namespace, expires_at) index serves the clean-up of a namespace's idle sessions.
CREATE CONSTRAINT suppression_session_key IF NOT EXISTS FOR (s:SuppressionSession) REQUIRE (s.namespace, s.session_id) IS UNIQUE;
CREATE INDEX suppression_session_ns_expiry IF NOT EXISTS FOR (s:SuppressionSession) ON (s.namespace, s.expires_at);
