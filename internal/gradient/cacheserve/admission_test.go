package cacheserve

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/buildfleet/buildfleet/internal/gradient/clocktest"
)

// Admission against a model: whatever the order of acquires, progress, releases and time,
// the counts match the live leases, no limit is passed, a path has at most one lease, a
// refusal names the limit that was really reached, and only idle leases expire.
func TestAdmissionKeepsItsLimits(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		clk := clocktest.New(time.Unix(0, 0))
		cfg := AdmissionConfig{LargeSlots: 2, SmallSlots: 3, SmallMax: 100, ByteBudget: 1000, Lease: 300 * time.Second, Now: clk.Now}
		a := NewAdmission(cfg)
		live := map[string]*Lease{}
		expired := map[string]bool{}
		t.Repeat(map[string]func(*rapid.T){
			"acquire": func(t *rapid.T) {
				path := fmt.Sprint(rapid.IntRange(0, 6).Draw(t, "path"))
				size := rapid.Uint64Range(0, 600).Draw(t, "size")
				l, err := a.Acquire(path, size, func() { expired[path] = true })
				for p := range expired {
					delete(live, p)
				}
				clear(expired)
				checkRefusal(t, a, cfg, live, path, size, err)
				if err == nil {
					live[path] = l
				}
			},
			"touch": func(t *rapid.T) {
				if p, ok := pick(t, live); ok {
					live[p].Touch()
				}
			},
			"release": func(t *rapid.T) {
				if p, ok := pick(t, live); ok {
					live[p].Release()
					live[p].Release()
					delete(live, p)
				}
			},
			"advance": func(t *rapid.T) {
				clk.Advance(time.Duration(rapid.IntRange(0, 200).Draw(t, "secs")) * time.Second)
			},
			"": func(t *rapid.T) {
				large, small, bytes := a.Usage()
				var wantL, wantS int
				var wantB uint64
				for _, l := range live {
					if l.large {
						wantL++
					} else {
						wantS++
					}
					wantB += l.size
				}
				if large != wantL || small != wantS || bytes != wantB || large > cfg.LargeSlots || small > cfg.SmallSlots || bytes > cfg.ByteBudget {
					t.Fatalf("usage %d/%d/%d, live leases say %d/%d/%d", large, small, bytes, wantL, wantS, wantB)
				}
			},
		})
	})
}

// pick draws one of the live paths, deterministically for rapid's replay.
func pick(t *rapid.T, live map[string]*Lease) (string, bool) {
	if len(live) == 0 {
		return "", false
	}
	return rapid.SampledFrom(slices.Sorted(maps.Keys(live))).Draw(t, "lease"), true
}

func checkRefusal(t *rapid.T, a *Admission, cfg AdmissionConfig, live map[string]*Lease, path string, size uint64, err error) {
	_, held := live[path]
	large, small, bytes := a.Usage()
	switch {
	case held && !errors.Is(err, ErrInProgress):
		t.Fatalf("a second lease on %s: %v", path, err)
	case errors.Is(err, ErrFull):
		isLarge := size > cfg.SmallMax
		if !(isLarge && large >= cfg.LargeSlots || !isLarge && small >= cfg.SmallSlots || bytes+size > cfg.ByteBudget) {
			t.Fatalf("refused %d bytes with room (%d large, %d small, %d bytes): %v", size, large, small, bytes, err)
		}
	case err != nil && !held:
		t.Fatalf("unexpected refusal: %v", err)
	}
}

func TestAdmissionExpiresOnlyIdleUnpinnedLeases(t *testing.T) {
	clk := clocktest.New(time.Unix(0, 0))
	a := NewAdmission(AdmissionConfig{Now: clk.Now})
	var expired []string
	acquire := func(p string) *Lease {
		l, err := a.Acquire(p, 10, func() { expired = append(expired, p) })
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	idle, busy, committing := acquire("idle"), acquire("busy"), acquire("committing")
	if !committing.Pin() {
		t.Fatal("pinning a live lease failed")
	}
	clk.Advance(200 * time.Second)
	busy.Touch()
	clk.Advance(101 * time.Second)
	if n := a.Sweep(); n != 1 || len(expired) != 1 || expired[0] != "idle" {
		t.Fatalf("swept %d: %v", n, expired)
	}
	if idle.Pin() {
		t.Error("an expired lease pinned")
	}
	if !a.InProgress("busy") || !a.InProgress("committing") || a.InProgress("idle") {
		t.Error("the wrong leases were reclaimed")
	}
}

// Every counter is listed once, under a name of its own with a help line of its own, and no
// two series share an atomic.
func TestCounterNamesAreUnique(t *testing.T) {
	names, helps, fields := map[string]bool{}, map[string]bool{}, map[*atomic.Uint64]bool{}
	var c Counters
	c.RejectedNarHash.Add(3)
	for _, m := range c.Metrics() {
		if names[m.Name] || helps[m.Help] || m.Help == "" {
			t.Errorf("%s: name listed twice, or help %q empty or shared", m.Name, m.Help)
		}
		names[m.Name], helps[m.Help] = true, true
		series := m.Series
		if m.Value != nil {
			series = map[string]*atomic.Uint64{"": m.Value}
		}
		for _, f := range series {
			if fields[f] {
				t.Errorf("%s: a counter listed twice", m.Name)
			}
			fields[f] = true
		}
		if m.Name == rejected && m.Series["nar_hash"].Load() != 3 {
			t.Errorf("nar_hash rejections = %d, want 3", m.Series["nar_hash"].Load())
		}
	}
	if !names["gradient_cache_uploads_committed_total"] || !names[rejected] || len(fields) != len(counterNames) {
		t.Errorf("missing names or counters: %d of %d counters listed", len(fields), len(counterNames))
	}
}
