package cc

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/ccstats"
	"github.com/buildfleet/buildfleet/internal/pace/lease"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// TestDispatchCauses: each error the dispatch path wraps, as it wraps it, is named by its
// cause, with no address in it.
func TestDispatchCauses(t *testing.T) {
	refused := func(c wire.Code) error { return wire.Refuse(c, "") }
	dial := &dialError{addr: "10.0.0.5:6674", err: &net.OpError{Op: "dial", Err: os.ErrDeadlineExceeded}}
	timeout := &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}
	pub, _, _ := ed25519.GenerateKey(nil)
	unsigned := lease.VerifyReply(pub, "c", nil, make([]byte, ed25519.SignatureSize))
	for _, tc := range []struct {
		name string
		got  ccstats.Cause
		want ccstats.Cause
	}{
		{"scheduler refusal", schedulerCause(fmt.Errorf("scheduler %s: %w", "10.0.0.5:6674", refused(wire.CodeNoWorker))), "refused:no-worker"},
		{"ticket refused at AUTH", schedulerCause(fmt.Errorf("scheduler x: LEASE to x: %w", refused(wire.CodeTicketRefused))), "refused:ticket-refused"},
		{"unknown code", schedulerCause(refused(wire.Code(0xee))), "refused:unrecognised"},
		{"scheduler not dialled (a dial timeout too)", schedulerCause(fmt.Errorf("scheduler x: %w", dial)), ccstats.CauseSchedulerUnreachable},
		{"scheduler timed out", schedulerCause(fmt.Errorf("scheduler x: %w", timeout)), ccstats.CauseSchedulerError},
		{"grant malformed", schedulerCause(io.ErrUnexpectedEOF), ccstats.CauseSchedulerError},
		{"worker refusal", workerCause(fmt.Errorf("worker x: %w", refused(wire.CodeNotAMember))), "worker-refused:not-a-member"},
		{"lease expired", workerCause(fmt.Errorf("worker x: %w", refused(wire.CodeLeaseExpired))), "worker-refused:lease-expired"},
		{"no worker address", workerCause(fmt.Errorf("no worker address reachable: %w", dial)), ccstats.CauseWorkerUnreachable},
		{"worker silent", workerCause(fmt.Errorf("worker x: read reply header: %w", timeout)), ccstats.CauseWorkerTimeout},
		{"worker hung up", workerCause(fmt.Errorf("worker x: %w", io.ErrUnexpectedEOF)), ccstats.CauseWorkerError},
		{"crossed", workerCause(errCrossedReply), ccstats.CauseCrossedReply},
		{"unsigned", workerCause(fmt.Errorf("worker x: %w", unsigned)), ccstats.CauseReplyUnverified},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
	if unsigned == nil {
		t.Fatal("a zero signature verified")
	}
}

// TestDialErrorIsUnreachable: a refused connection comes back as a dialError naming the
// address, so the cause is unreachable and the verbose line still says where.
func TestDialErrorIsUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	r := &run{cfg: Config{ConnectTimeout: time.Second}}
	_, err = r.dial(context.Background(), addr)
	if got := schedulerCause(err); got != ccstats.CauseSchedulerUnreachable {
		t.Fatalf("%v: cause %q", err, got)
	}
	if !strings.HasPrefix(err.Error(), "dialling "+addr+": ") {
		t.Fatalf("message %q", err)
	}
}
