package store

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/nixhash"
)

func TestParseJobID(t *testing.T) {
	cases := []struct {
		in   string
		want JobRef
		ok   bool
	}{
		{"eval:0190a000-0000-7000-8000-00000000000a", EvalJob("0190a000-0000-7000-8000-00000000000a"), true},
		{"build:x", BuildJob("x"), true},
		{"build:", JobRef{}, false},
		{"cache:x", JobRef{}, false},
		{"evalx", JobRef{}, false},
		{"", JobRef{}, false},
	}
	for _, c := range cases {
		got, err := ParseJobID(c.in)
		if c.ok != (err == nil) || got != c.want {
			t.Errorf("ParseJobID(%q) = %v, %v", c.in, got, err)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseJobID(%q) error %v is not ErrInvalid", c.in, err)
		}
		if c.ok && got.String() != c.in {
			t.Errorf("%q round-trips to %q", c.in, got.String())
		}
	}
}

func TestStoreHash(t *testing.T) {
	const h = "0c9gbn6z2fxq6ajy0gz7cvqsbmxsp2ks"
	cases := []struct {
		in, want string
	}{
		{"/nix/store/" + h + "-hello-2.12", h},
		{h + "-hello", h},
		{"/nix/store/" + h + "-x.drv", h},
		{"/nix/store/" + h, ""},                                      // no name
		{"/nix/store/" + h[:31] + "-x", ""},                          // short hash
		{"/nix/store/" + strings.Replace(h, "0", "e", 1) + "-x", ""}, // 'e' is not nix32
		{"/nix/store/" + strings.ToUpper(h) + "-x", ""},
	}
	for _, c := range cases {
		got, err := StoreHash(c.in)
		if got != c.want || (err == nil) != (c.want != "") {
			t.Errorf("StoreHash(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestPolicyBackoffDoublesAndCaps(t *testing.T) {
	p := DefaultPolicy()
	for n, want := range map[int]time.Duration{1: 30 * time.Second, 2: time.Minute, 3: 2 * time.Minute, 1000: 24 * time.Hour} {
		if got := p.Backoff(n); got != want {
			t.Errorf("Backoff(%d) = %v, want %v", n, got, want)
		}
	}
}

func TestBuildOptionsFillsDefaults(t *testing.T) {
	o := BuildOptions(WithPolicy(Policy{MaxBuildAttempts: 5}))
	if o.Clock == nil || o.Policy.MaxBuildAttempts != 5 || o.Policy.LostWorkerLimit != 10 || o.Policy.RetryBackoff != 30*time.Second {
		t.Errorf("options %+v", o.Policy)
	}
	fixed := time.Unix(42, 0)
	if got := BuildOptions(WithClock(func() time.Time { return fixed })).Clock(); !got.Equal(fixed) {
		t.Errorf("clock %v", got)
	}
}

// TestStatusNumbersArePinned guards gradient-server §9's numbering, which the
// database stores.
func TestStatusNumbersArePinned(t *testing.T) {
	builds := []BuildStatus{BuildCreated, BuildQueued, BuildBuilding, BuildCompleted, BuildFailedPermanent,
		BuildAborted, BuildDependencyFailed, BuildSubstituted, BuildFailedTransient, BuildFailedTimeout}
	for i, s := range builds {
		if int(s) != i || s.String() != buildStatusNames[i] {
			t.Errorf("build status %s = %d, want %d", s, s, i)
		}
	}
	evals := []EvaluationStatus{EvalQueued, EvalEvaluatingFlake, EvalEvaluatingDerivation, EvalBuilding, EvalWaiting,
		EvalCompleted, EvalFailed, EvalAborted, EvalFetching}
	for i, s := range evals {
		if int(s) != i {
			t.Errorf("evaluation status %s = %d, want %d", s, s, i)
		}
	}
	outcomes := []AttemptOutcome{AttemptRunning, AttemptBuilt, AttemptSubstituted, AttemptFailed, AttemptAborted}
	for i, o := range outcomes {
		if int(o) != i {
			t.Errorf("attempt outcome %s = %d, want %d", o, o, i)
		}
	}
	if BuildStatus(42).String() != "Unknown(42)" {
		t.Error("unknown status name")
	}
}

func TestTerminalStatuses(t *testing.T) {
	for s := BuildCreated; s <= BuildFailedTimeout; s++ {
		active := s == BuildCreated || s == BuildQueued || s == BuildBuilding || s == BuildFailedTransient
		if s.Terminal() == active {
			t.Errorf("%s.Terminal() = %v", s, s.Terminal())
		}
	}
	for s := EvalQueued; s <= EvalFetching; s++ {
		if s.Terminal() != (s == EvalCompleted || s == EvalFailed || s == EvalAborted) {
			t.Errorf("%s.Terminal() = %v", s, s.Terminal())
		}
	}
}

func FuzzParseJobID(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		j, err := ParseJobID(s)
		if err != nil {
			return
		}
		if j.String() != s {
			t.Errorf("%q parses to %v, which prints %q", s, j, j.String())
		}
	})
}

func FuzzStoreHash(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		h, err := StoreHash(s)
		if err != nil {
			return
		}
		if len(h) != 32 || !nixhash.IsBase32(h) || !strings.Contains(s, h+"-") {
			t.Errorf("StoreHash(%q) = %q", s, h)
		}
	})
}
