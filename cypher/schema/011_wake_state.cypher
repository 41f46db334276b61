// One wake state per namespace (when the agent last woke, on which wake packet), so concurrent
// API workers claim a wake once per sleep.
CREATE CONSTRAINT wake_state_ns IF NOT EXISTS FOR (s:WakeState) REQUIRE s.namespace IS UNIQUE;
