-- Retention, gradient-server §15: the indexes the pruning scans use (the branch an evaluation
-- ran for, by which the newest evaluations of each project and branch are the cache's roots,
-- is migration 0003's).
CREATE INDEX evaluation_by_created ON evaluation(created_at);
CREATE INDEX build_attempt_by_finished ON build_attempt(finished_at) WHERE finished_at IS NOT NULL;
