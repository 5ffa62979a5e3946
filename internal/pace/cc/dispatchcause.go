package cc

import (
	"errors"
	"net"

	"github.com/buildfleet/buildfleet/internal/pace/ccstats"
	"github.com/buildfleet/buildfleet/internal/pace/lease"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// errCrossedReply is a COMPILE reply whose correlation is not this request's.
var errCrossedReply = errors.New("crossed reply")

// dialError is a connection that was never made, which the statistics count as unreachable
// rather than as an exchange that broke.
type dialError struct {
	addr string
	err  error
}

func (e *dialError) Error() string { return "dialling " + e.addr + ": " + e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// schedulerCause names why a LEASE ended without a grant; the statistics keep the cause, never
// the address (pace-wire §3.13).
func schedulerCause(err error) ccstats.Cause {
	var ref wire.Refusal
	var de *dialError
	switch {
	case errors.As(err, &ref):
		return ccstats.SchedulerRefused(ref.Code)
	case errors.As(err, &de):
		return ccstats.CauseSchedulerUnreachable
	}
	return ccstats.CauseSchedulerError
}

// workerCause names why a granted COMPILE brought no usable reply.
func workerCause(err error) ccstats.Cause {
	var ref wire.Refusal
	var de *dialError
	var ne net.Error
	switch {
	case errors.Is(err, errCrossedReply):
		return ccstats.CauseCrossedReply
	case errors.Is(err, lease.ErrReplyUnauthenticated):
		return ccstats.CauseReplyUnverified
	case errors.As(err, &ref):
		return ccstats.WorkerRefused(ref.Code)
	case errors.As(err, &de):
		return ccstats.CauseWorkerUnreachable
	case errors.As(err, &ne) && ne.Timeout():
		return ccstats.CauseWorkerTimeout
	}
	return ccstats.CauseWorkerError
}
