// Package cachegc runs the server's cache garbage collection and the retention of
// evaluations and logs (gradient-server §15): it reads the graph from the store, lets the
// retention planner decide, and deletes what the plan says — each path's row first, then its
// NAR object, while holding off uploads of that path — and, with a log retention set, prunes
// old evaluations and logs that no kept evaluation needs. A dry run only plans.
//
// One collection runs at a time; a second caller waits for the first.
package cachegc
