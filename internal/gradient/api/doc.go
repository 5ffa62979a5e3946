// Package api is gradient-server's administration API: JSON over HTTP under /api/v1, on the
// server's one listener beside /proto and /healthz (which are not this package's).
//
// # Authentication
//
// Every request carries an API key, `Authorization: GRAD<key>` or `Authorization: Bearer GRAD<key>`
// (gradient-protocol §7.1). The server hashes the part after GRAD (SHA-256 hex) and looks the hash
// up; a missing, malformed, unknown or revoked key is 401. A key pinned to a cache may only read
// that cache (GET /caches, GET /caches/{cache}); anything else is 403. Keys and tokens appear in
// exactly two answers, the ones that create them, and never in logs.
//
// Mounted beside the web UI (gradient-server §17), Config.Session also admits the UI's session
// cookie, on GET and HEAD only: a cookie rides along on any request a browser makes, so it never
// authorizes a change. The UI's forms, CSRF-checked, come in through WithCaller as their key.
//
// # Routes
//
// {project}, {cache} and {team} take an ID or a name (names may not look like UUIDs, so the two never
// collide); {worker} is a worker ID (a UUID); other {ids} are UUIDs.
//
//	GET    /api/v1/projects                                   ProjectList
//	POST   /api/v1/projects                                   CreateProjectRequest -> 201 Project
//	GET    /api/v1/projects/{project}                         Project (with subscribed cache names)
//	PUT    /api/v1/projects/{project}/caches/{cache}          subscribe (idempotent) -> 204
//	DELETE /api/v1/projects/{project}/caches/{cache}          unsubscribe -> 204
//	GET    /api/v1/projects/{project}/evaluations?limit=N     EvaluationList, newest first
//	POST   /api/v1/projects/{project}/evaluations             StartEvaluationRequest -> 201 Evaluation
//	POST   /api/v1/projects/{project}/registrations           RegisterWorkerRequest -> 201 RegisterWorkerResponse
//	PATCH  /api/v1/projects/{project}/registrations/{worker}  SetActiveRequest -> Registration
//	GET    /api/v1/projects/{project}/workers                 WorkerList: live only if authenticated for the project
//	PUT    /api/v1/projects/{project}/teams/{team}            grant the team's workers (idempotent) -> 204
//	DELETE /api/v1/projects/{project}/teams/{team}            withdraw the grant -> 204
//	GET    /api/v1/teams                                      TeamList (workers, granting projects)
//	POST   /api/v1/teams                                      CreateTeamRequest -> 201 Team
//	GET    /api/v1/teams/{team}                               Team
//	POST   /api/v1/teams/{team}/workers                       RegisterTeamWorkerRequest -> 201 RegisterTeamWorkerResponse
//	PATCH  /api/v1/teams/{team}/workers/{worker}              SetActiveRequest -> TeamWorker (enable/disable)
//	GET    /api/v1/caches                                     CacheList
//	POST   /api/v1/caches                                     CreateCacheRequest -> 201 Cache
//	GET    /api/v1/caches/{cache}                             Cache
//	POST   /api/v1/caches/{cache}/registrations               RegisterWorkerRequest -> 201 RegisterWorkerResponse
//	PATCH  /api/v1/caches/{cache}/registrations/{worker}      SetActiveRequest -> Registration
//	GET    /api/v1/registrations?worker=ID                    RegistrationList
//	GET    /api/v1/workers                                    WorkerList (live or offline, last failure)
//	GET    /api/v1/workers/{worker}                           Worker with its registrations
//	GET    /api/v1/evaluations/{id}                           EvaluationDetail (builds, messages)
//	POST   /api/v1/evaluations/{id}/abort                     AbortRequest -> AbortResponse
//	GET    /api/v1/builds/{id}                                BuildDetail (attempts)
//	POST   /api/v1/builds/{id}/abort                          AbortRequest -> AbortResponse
//	POST   /api/v1/builds/{id}/retry                          queue a build that failed for good again -> Build
//	GET    /api/v1/builds/{id}/log?attempt=ID&offset=N&limit=N  text/plain
//	GET    /api/v1/api-keys                                   APIKeyList
//	POST   /api/v1/api-keys                                   CreateAPIKeyRequest -> 201 CreateAPIKeyResponse
//	DELETE /api/v1/api-keys/{id}                              revoke -> 204
//
// A registration answers with the peer token once (48 random bytes, base64) and stores only
// its argon2id hash. A registration with a url (a server-dialed worker) also needs the token
// sealed for dialing: Config.SealDialToken, which the dialing work provides; without it such
// a request is 501. Starting an evaluation calls LiveView.Kick so the dispatcher offers it;
// an abort hands the store's Effects to LiveView.Apply so running jobs get AbortJob.
//
// A team worker (gradient-protocol §4.2) is registered once on a team and answers its challenge
// with `<team id>:<token>`; it serves every project that grants the team. A worker ID belongs to
// registrations or to one team worker, never both (409 worker_id_taken). A LiveView that implements
// RegistrationWatcher hears of every registration, team worker, grant and cache subscription change
// that may concern a worker, so a connected worker reauthenticates (gradient-protocol §4.3). A
// project's worker list shows a worker live only when its session authenticated for that project.
//
// The build log defaults to the latest attempt, from offset 0, at most 1 MiB per answer (8
// MiB at most); the headers X-Gradient-Attempt, X-Gradient-Log-Size and
// X-Gradient-Next-Offset let a client page through it.
//
// # Errors
//
// Errors are `{"error": "...", "code": "..."}` (Error, Code* constants): 400 bad input, 401
// no valid key, 403 pinned key, 404 unknown, 405 wrong method, 409 conflict (a taken name, a
// duplicate registration, a worker ID held by a team worker, revoking the last admin key, an
// abort of something finished), 413 a body over 1 MiB, 500 with the cause only in the log.
package api
