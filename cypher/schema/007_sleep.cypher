// Sleep leases (one sleep per namespace at a time) and subject expiry lookups.
CREATE CONSTRAINT sleep_lease_ns IF NOT EXISTS FOR (l:SleepLease) REQUIRE l.namespace IS UNIQUE;
CREATE INDEX topic_utility IF NOT EXISTS FOR (t:Topic) ON (t.namespace, t.utility_score);
