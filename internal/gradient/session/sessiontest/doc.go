// Package sessiontest holds in-memory twins of what a handshake driver supplies to the
// session roles — a server Directory (registrations, tokens, live sessions) and a dialed
// worker's ServerTokens — and Pair, which runs two roles against each other through the real
// wire codec with no socket. Session tests use it to show full handshakes; driver tests
// (wsconn, server, worker) can use the same fakes to answer Needs.
package sessiontest
