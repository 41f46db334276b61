// Sleep runs (one node per attempt, listed newest first per namespace) and the due queue the
// sleep workers scan (a due namespace's SleepLease carries due_since).
CREATE CONSTRAINT sleep_run_id IF NOT EXISTS FOR (r:SleepRun) REQUIRE r.run_id IS UNIQUE;
CREATE INDEX sleep_run_started IF NOT EXISTS FOR (r:SleepRun) ON (r.namespace, r.started_at);
CREATE INDEX sleep_lease_due IF NOT EXISTS FOR (l:SleepLease) ON (l.due_since);
