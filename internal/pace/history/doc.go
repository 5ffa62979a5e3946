// Package history is the fleet's per-minute record of each machine (pace-node §6.5). A node
// samples its own figures once a minute and keeps the closed buckets in an Outbox, which hands
// them to the leader on the heartbeat (or, without a worker, the announcement) the node was
// sending anyway; the leader keeps what arrives in a Fleet, per machine, whoever led when the
// minute was sampled — so a new leader fills the windows before its term from what the
// machines hand over. Nothing here does I/O.
package history
