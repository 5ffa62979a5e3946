package session

import "github.com/buildfleet/buildfleet/internal/gradient/wire"

// Negotiate computes the capabilities a server sends in InitAck (gradient-protocol §5): core
// and cache are the server's alone and always true; fetch, eval and build are the worker's
// flag AND every active registration's enable flag (a team worker has no registrations to
// clamp it); federate is the worker's flag AND the server's proto.federate setting (default
// off).
func Negotiate(worker wire.GradientCapabilities, f WorkerFacts, serverFederate bool) wire.GradientCapabilities {
	c := wire.GradientCapabilities{
		Core:     true,
		Cache:    true,
		Federate: worker.Federate && serverFederate,
		Fetch:    worker.Fetch,
		Eval:     worker.Eval,
		Build:    worker.Build,
	}
	for _, r := range f.ActiveRegistrations() {
		c.Fetch = c.Fetch && r.EnableFetch
		c.Eval = c.Eval && r.EnableEval
		c.Build = c.Build && r.EnableBuild
	}
	return c
}

// CacheSessionCapabilities is what a /cache/{cache}/proto session answers in InitAck
// (gradient-protocol §5, gradient-protocol §7.1): cache and nothing else.
func CacheSessionCapabilities() wire.GradientCapabilities {
	return wire.GradientCapabilities{Cache: true}
}

// WorkerOffer clears the flags only a server may set (core, cache) from what a worker sends
// in InitConnection (gradient-protocol §5: workers send core=false).
func WorkerOffer(c wire.GradientCapabilities) wire.GradientCapabilities {
	c.Core, c.Cache = false, false
	return c
}
