// Package store is gradient's persistent state (gradient-server §9) behind one Store
// interface, shaped around what the server does rather than around tables: every method is
// one domain operation (register a worker, claim a job, apply a failure report, recover after
// a restart) and every state change runs in one transaction.
//
// Two backends implement it on the same relational model: store/sqlite (modernc.org/sqlite,
// the embedded default) and store/postgres (pgx/v5). Both share one implementation of the
// rules (store/internal/relational) and differ only in drivers, transactions and migrations.
// store/storetest is the conformance suite both pass.
//
// # The rules the store keeps (so the server need not)
//
//   - Status numbers are pinned by gradient-server §9 (BuildStatus, EvaluationStatus,
//     AttemptOutcome).
//   - A job has at most one open assignment; Claim inserts it atomically and returns
//     ErrLostRace to every other claimer (gradient-server §6.1). Reports name their
//     assignment; a report on a closed or unknown assignment returns ErrStaleAssignment and
//     changes nothing.
//   - Builds are shared across evaluations (one build per derivation). A build is startable
//     (Queued) once every dependency is Completed or Substituted; EvalResult batches may name
//     dependencies that arrive in a later batch (forward references).
//   - Failures follow gradient-server §6.4 (see FailureKind), lost workers
//     gradient-server §6.5 (AbandonWorker), restarts gradient-server §6.6
//     (RecoverInterruptedWork). An evaluation's terminal status is derived from its builds.
//   - A cached path counts as cached only when its file_hash is recorded and it is visible
//     through a cache the caller may read (gradient-protocol §7.2, gradient-protocol §7.3).
//
// Methods that change job state return Effects: the builds that became startable (offer them
// at once), the jobs that went back to the queue, the evaluations that settled, the open
// assignments the change closed (send AbortJob) and the cache rows it demoted (delete their
// NAR objects).
//
// # How the server drives it (spec message -> method)
//
//	start:                RecoverInterruptedWork, before the first session (gradient-server §6.6)
//	handshake:            WorkerIdentity -> session.FactsAnswer; verify tokens against
//	                      TokenHashes; MarkWorkerConnected; MarkWorkerOffline on refusals
//	WorkerCapabilities:   SetWorkerCapabilities; every inbound frame: MarkWorkerSeen (batched)
//	RequestJob{kind}:     Candidates, then Claim each in order until one succeeds
//	                      (ErrLostRace: next, at most 3); AssignJob{job_id: Job.String(),
//	                      assignment_id: Assignment.ID}
//	AssignJobResponse:    accepted:false -> DeclineAssignment
//	JobUpdate Fetching, EvaluatingFlake, EvaluatingDerivations -> SetEvaluationPhase;
//	FetchResult -> RecordFlakeSource; EvalResult -> AddEvalResult (offer Effects.Startable);
//	EvalMessage -> AddEvaluationMessages; QueryKnownDerivations -> KnownDerivations
//	JobUpdate Building:   StartBuildAttempt;  LogChunk: AppendBuildLogChunk (then to live followers)
//	JobCompleted:         CompleteEvaluationJob or CompleteBuild (substituted from BuildOutput)
//	JobFailed:            FailEvaluationJob or FailBuild (kind maps 1:1 to FailureKind)
//	session ends:         AbandonWorker, then release the worker's session slot (gradient-server §6.5)
//	API abort:            AbortEvaluation / AbortBuild; send AbortJob for Effects.Closed
//	CacheQuery:           CachesOfProjects (the session's authorized projects) then
//	                      LookupCachedPaths; any error -> CacheError, never cached:false
//	UploadFinished:       store the bytes, then PutCachedPath (and SignCachedPath)
//	NarUnavailable:       DemoteCachedPath; InputsUnavailable demotes via FailBuild
//
// Every report method takes the assignment ID the server handed out; ErrStaleAssignment means
// the assignment was closed (lost worker, abort, restart) and the report must be dropped.
// Effects.Demoted lists NAR objects to delete after the transaction committed.
//
// Time comes from the Clock option, so tests and the retry backoff are deterministic.
package store
