package server

import (
	"runtime"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// gradient-protocol §1.4: an InitConnection on a running session is answered Error 400
// "unexpected InitConnection" and the session closes; its job is abandoned, the violation
// counted and kept as the offline reason. Before this the session logged a violation and
// kept its socket and goroutines.
func TestInitConnectionAfterTheHandshakeEndsTheSession(t *testing.T) {
	r := newRig(t, Config{})
	r.queueEvaluation()
	p := r.connect(workerA)
	p.send(&wire.RequestJob{Kind: wire.JobKindFlake})
	job := assignOf(t, p.next())

	p.send(&wire.InitConnection{ID: workerA})
	if m, ok := p.next().(*wire.ServerError); !ok || m.Code != 400 || m.Message != "unexpected InitConnection" {
		t.Fatalf("got %+v, want Error 400 unexpected InitConnection", m)
	}
	if _, err := p.read(5 * time.Second); err == nil {
		t.Fatal("the session stayed open after the violation")
	}
	eventually(t, "the session to end", func() bool { return r.srv.sessions.get(workerA) == nil })
	if n := r.srv.counters.ProtocolViolations.Load(); n != 1 {
		t.Errorf("violations counted %d, want 1", n)
	}
	eventually(t, "the offline reason", func() bool {
		return r.offlineReason(workerA) == "protocol violation: 400 unexpected InitConnection"
	})
	b := r.connect(workerB)
	b.send(&wire.RequestJob{Kind: wire.JobKindFlake})
	if again := assignOf(t, b.next()); again.JobID != job.JobID {
		t.Errorf("the abandoned job %s was not offered again (got %s)", job.JobID, again.JobID)
	}
}

// Every violating session gives back its goroutines: 20 of them leave the count where it was.
func TestViolatingSessionsLeaveNoGoroutines(t *testing.T) {
	r := newRig(t, Config{})
	violate := func(workerID string) {
		p := r.handshake(workerID, wire.GradientCapabilities{Build: true}, nil)
		p.send(&wire.InitConnection{ID: workerID})
		p.next()
		if _, err := p.read(5 * time.Second); err == nil {
			t.Fatal("the session stayed open after the violation")
		}
		p.c.Abort()
		eventually(t, "the session to end", func() bool { return r.srv.sessions.get(workerID) == nil })
	}
	r.register(workerA)
	violate(workerA) // the first session starts the server's lasting goroutines
	before := settledGoroutines()
	for range 20 {
		violate(workerA)
	}
	eventually(t, "the goroutines to wind down", func() bool { return runtime.NumGoroutine() <= before+2 })
}

// settledGoroutines is the goroutine count once it has stopped falling.
func settledGoroutines() int {
	n := runtime.NumGoroutine()
	for range 50 {
		time.Sleep(20 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m >= n {
			return m
		}
		n = m
	}
	return n
}
