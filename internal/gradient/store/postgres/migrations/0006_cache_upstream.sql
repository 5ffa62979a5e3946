-- gradient-server §14: the upstream binary caches a cache substitutes from, each with the
-- one public key trusted there.
CREATE TABLE cache_upstream (
    cache_id   UUID NOT NULL REFERENCES cache(id) ON DELETE CASCADE,
    url        TEXT NOT NULL,
    public_key TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (cache_id, url)
);
