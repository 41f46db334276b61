// API keys: only the SHA-256 hash of a key is stored; the hash and the public key id are unique.
CREATE CONSTRAINT api_key_hash IF NOT EXISTS FOR (k:ApiKey) REQUIRE k.key_hash IS UNIQUE;
CREATE CONSTRAINT api_key_id IF NOT EXISTS FOR (k:ApiKey) REQUIRE k.key_id IS UNIQUE;
