// Package history is the fleet's record of each machine and of the leader's dispatch outcomes
// (pace-node §6.5). A node samples its own figures once a minute and keeps the closed buckets
// in an Outbox, which hands them to the leader on the heartbeat (or, without a worker, the
// announcement) the node was sending anyway. The leader keeps what arrives in a Fleet, per
// machine, whoever led when the minute was sampled — so a new leader fills the windows before
// its term from what the machines hand over — and counts each LEASE decision itself, only
// while it leads. Every series lives in three preallocated rings (a day of minutes, thirty days
// of hours, 400 days), each slot keeping low, high, total and how many figures it holds; Fleet.View
// and Fleet.MachineView draw the charts from them, null where nothing was measured, and the
// Fleet reads and writes itself as a versioned file. Nothing here does I/O.
package history
