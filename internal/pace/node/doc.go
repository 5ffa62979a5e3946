// Package node assembles pace-node: the node port (cache tier, scheduler, compile worker,
// node proof, tickets) on one listener, consensus, the admin HTTP surface, and the operator
// verbs, all bound from one surface table.
package node
