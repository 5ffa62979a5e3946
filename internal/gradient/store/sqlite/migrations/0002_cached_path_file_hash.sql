-- The binary cache serves nar/<file_hash>.nar.zst: find a stored path by its compressed
-- bytes' hash without scanning every row.
CREATE INDEX cached_path_by_file_hash ON cached_path(file_hash) WHERE file_hash IS NOT NULL;
