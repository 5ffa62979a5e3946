package tier

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/kvclient"
)

// errFakeUnreachable is what fakeUpstream answers while it is "down".
var errFakeUnreachable = fmt.Errorf("%w: fake upstream unreachable", kvclient.ErrUnavailable)

// fakeUpstream is the in-memory twin of kvUpstream: it counts calls, can fail every call, and
// can hold calls until released, so decorators are tested without sockets or sleeps.
type fakeUpstream struct {
	mu      sync.Mutex
	vals    map[string][]byte
	fetches int
	stores  int
	fail    error
	hold    chan struct{} // when set, calls block until it is closed
	entered chan struct{} // when set, receives one token per call as it starts
}

func newFakeUpstream() *fakeUpstream { return &fakeUpstream{vals: map[string][]byte{}} }

func (f *fakeUpstream) begin() error {
	f.mu.Lock()
	hold, entered, fail := f.hold, f.entered, f.fail
	f.mu.Unlock()
	if entered != nil {
		entered <- struct{}{}
	}
	if hold != nil {
		<-hold
	}
	return fail
}

func (f *fakeUpstream) Fetch(_ context.Context, key []byte) ([]byte, bool, error) {
	f.mu.Lock()
	f.fetches++
	f.mu.Unlock()
	if err := f.begin(); err != nil {
		return nil, false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.vals[string(key)]
	return v, ok, nil
}

func (f *fakeUpstream) Store(_ context.Context, key, _, value []byte) error {
	f.mu.Lock()
	f.stores++
	f.mu.Unlock()
	if err := f.begin(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.vals[string(key)] = value
	return nil
}

func (f *fakeUpstream) Close() error { return nil }

func (f *fakeUpstream) setFail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = err
}

func (f *fakeUpstream) calls() (fetches, stores int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fetches, f.stores
}

func (f *fakeUpstream) put(key string, v []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.vals[key] = v
}

func (f *fakeUpstream) get(key string) ([]byte, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.vals[key]
	return v, ok
}

// newTierWith opens a tier whose upstream is up (decorated as New decorates a real one).
func newTierWith(t testing.TB, cfg Config, up upstream) *Tier {
	t.Helper()
	if cfg.Upstream == "" {
		cfg.Upstream = "fake.invalid:6674"
	}
	return newTierOpen(t, cfg, up)
}
