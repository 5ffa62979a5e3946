-- Retention, gradient-server §15: the branch an evaluation was started for (the newest
-- evaluations of each project and branch are the cache's roots; '' when started by commit),
-- and the indexes the pruning scans use.
ALTER TABLE evaluation ADD COLUMN branch TEXT NOT NULL DEFAULT '';
CREATE INDEX evaluation_by_created ON evaluation(created_at);
CREATE INDEX build_attempt_by_finished ON build_attempt(finished_at) WHERE finished_at IS NOT NULL;
