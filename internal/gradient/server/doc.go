// Package server assembles gradient-server's worker side: /proto sessions (version agreement,
// the authority handshake answered from the store, one live session per worker ID), the
// pull-only job loop of gradient-server §6 (RequestJob → claim → AssignJob, reports applied
// in order off the read loop and filtered by the assignments this session handed out), cache
// traffic through cacheserve, the liveness pass, restart recovery and the SIGTERM drain. A
// running session keeps its handshake role for reauth (gradient-protocol §4.3, reauth.go):
// the worker's ReauthRequest and the API's registration changes (RegistrationChanged) run a
// challenge round whose AuthUpdate only grows the session's grants, so a project registering
// the worker or granting its team joins the running session; a worker whose registrations
// were all deactivated is rejected 403 and disconnected.
//
// The rules live below it: session decides the handshake, store decides every state change
// (and reports its Effects), cacheserve moves NARs. This package routes messages between
// them and acts on Effects: offer startable jobs, send AbortJob, delete demoted objects.
package server
