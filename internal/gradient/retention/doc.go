// Package retention decides what the server's binary cache keeps (gradient-server §15): a
// pure planner with no I/O, given the evaluations, the cached paths with their sizes,
// references and times, the policy and the current time.
//
// The roots are the paths of the newest KeepEvaluations evaluations of every project and
// branch, the paths of every evaluation that has not settled (its builds still need their
// inputs), and every path stored or fetched within KeepFetched. Everything reachable from a
// root through recorded references is kept; every other path is deleted, each with the reason
// and the moment since which nothing kept it. Nothing reachable from a root is ever deleted.
package retention
