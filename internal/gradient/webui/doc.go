// Package webui is gradient-server's web UI (gradient-server §17): server-rendered pages of
// projects, evaluations, builds, workers, caches and the queue, on a listener of its own that
// also mounts the JSON API, so the pages' one script (the live log) calls the API on the same
// origin with the session cookie.
//
// Signing in exchanges an API key (or a one-time link) for a session held in memory, bounded
// and expiring; the cookie is HttpOnly, SameSite=Strict, and Secure behind TLS. Every form
// that changes something carries the session's CSRF token; the change itself goes through the
// API handler in process (api.WithCaller), so a key may do in the UI exactly what the API lets
// it do.
package webui
