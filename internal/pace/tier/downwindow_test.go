package tier

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/clocktest"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

func newTestWindow(f *fakeUpstream, clock *clocktest.Clock) *downWindow {
	return newDownWindow(f, DefaultDownWindow, clock.Now, slog.New(slog.DiscardHandler), "fake")
}

// pace-node §4 rule 4, on the decorator alone: no call inside the window, one probe
// after it.
func TestDownWindowAdmitsNothingInsideAndOneProbeAfter(t *testing.T) {
	f, clock := newFakeUpstream(), newFakeClock()
	d := newTestWindow(f, clock)
	f.setFail(errFakeUnreachable)
	if _, _, err := d.Fetch(bg, []byte("k")); !isDown(err) {
		t.Fatalf("first fetch: %v", err)
	}
	for range 3 {
		if _, _, err := d.Fetch(bg, []byte("k")); err != errUpstreamDown {
			t.Fatalf("inside the window: %v", err)
		}
		if err := d.Store(bg, []byte("k"), nil, []byte{1}); err != errUpstreamDown {
			t.Fatalf("store inside the window: %v", err)
		}
		clock.Advance(time.Second)
	}
	if fetches, stores := f.calls(); fetches != 1 || stores != 0 {
		t.Fatalf("%d fetches, %d stores reached the upstream inside the window", fetches, stores)
	}

	clock.Advance(DefaultDownWindow)
	f.setFail(nil)
	if _, _, err := d.Fetch(bg, []byte("k")); err != nil {
		t.Fatalf("probe: %v", err)
	}
	if d.down() {
		t.Fatal("a successful probe must end the window")
	}
}

// While the probe is in flight, every other operation still answers at once.
func TestOnlyOneProbeAtATime(t *testing.T) {
	f, clock := newFakeUpstream(), newFakeClock()
	d := newTestWindow(f, clock)
	f.setFail(errFakeUnreachable)
	d.Fetch(bg, []byte("k"))
	clock.Advance(DefaultDownWindow)

	hold := make(chan struct{})
	f.mu.Lock()
	f.hold, f.entered = hold, make(chan struct{}, 16)
	f.mu.Unlock()
	probeDone := make(chan error, 1)
	go func() {
		_, _, err := d.Fetch(bg, []byte("probe"))
		probeDone <- err
	}()
	receive(t, f.entered, "the probe reaching the upstream")
	others := make(chan error, 1)
	go func() { // on its own goroutine: were it let through, it would block on the hold
		for range 5 {
			if _, _, err := d.Fetch(bg, []byte("other")); err != errUpstreamDown {
				others <- err
				return
			}
		}
		others <- nil
	}()
	err := receive(t, others, "the operations during the probe")
	close(hold)
	if err != nil {
		t.Fatalf("an operation during the probe reached the upstream: %v", err)
	}
	if err := receive(t, probeDone, "the probe's outcome"); !isDown(err) {
		t.Fatalf("probe: %v", err)
	}
	if fetches, _ := f.calls(); fetches != 2 {
		t.Fatalf("%d fetches reached the upstream, want the first and the probe", fetches)
	}
	if !d.down() {
		t.Fatal("a failed probe must open a new window")
	}
	clock.Advance(DefaultDownWindow - time.Nanosecond)
	if _, _, err := d.Fetch(bg, []byte("k")); err != errUpstreamDown {
		t.Fatalf("inside the new window: %v", err)
	}
}

// A refusal is an answer: it neither opens a window nor keeps one open.
func TestRefusalIsAnAnswer(t *testing.T) {
	f, clock := newFakeUpstream(), newFakeClock()
	d := newTestWindow(f, clock)
	f.setFail(wire.Refusal{Code: wire.CodeUnauthenticated})
	d.Fetch(bg, []byte("k"))
	if d.down() {
		t.Fatal("a refusal opened the window")
	}
	f.setFail(errFakeUnreachable)
	d.Fetch(bg, []byte("k"))
	clock.Advance(DefaultDownWindow)
	f.setFail(wire.Refusal{Code: wire.CodePayloadTooLarge})
	d.Store(bg, []byte("k"), nil, []byte{1})
	if d.down() {
		t.Fatal("a refused probe is still an answer: the window must end")
	}
}

// An exchange its own caller abandoned says nothing about the upstream.
func TestCancelledCallerTeachesNothing(t *testing.T) {
	f, clock := newFakeUpstream(), newFakeClock()
	d := newTestWindow(f, clock)
	ctx, cancel := context.WithCancel(bg)
	cancel()
	f.setFail(errFakeUnreachable)
	d.Fetch(ctx, []byte("k"))
	if d.down() {
		t.Fatal("a cancelled caller opened the window")
	}
	if !isDown(errUpstreamDown) {
		t.Fatal("errUpstreamDown must read as unavailable")
	}
}
