// Package kv is pace-kv, the shared cache server: FETCH, STORE and CACHE-DROP over the store,
// AUTH against an optional password, and a polite refusal of every verb it does not serve.
//
// It is shared infrastructure that answers non-members on purpose, so its only gate is the
// password (--requirepass). Every value a client stores must be a compile-value of our
// generation; its text regions are canonicalized with the producer's roots on the way in, so
// one stored copy serves every checkout location.
package kv
