package tier

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/buildfleet/buildfleet/internal/pace/clocktest"
	"github.com/buildfleet/buildfleet/internal/pace/value"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// tierModel is the five rules of pace-node §4 written as plain maps and one timestamp.
type tierModel struct {
	local, upstream map[string][]byte
	reachable       bool
	downUntil       time.Time // zero: up
}

// admits reports whether an operation reaches the upstream now (sequential callers: the
// first after the window is the probe).
func (m *tierModel) admits(now time.Time) bool {
	return m.downUntil.IsZero() || !now.Before(m.downUntil)
}

// exchange models one admitted exchange's effect on the window; it reports an answer.
func (m *tierModel) exchange(now time.Time) bool {
	if !m.reachable {
		m.downUntil = now.Add(DefaultDownWindow)
		return false
	}
	m.downUntil = time.Time{}
	return true
}

// modelRun drives a tier with an in-memory upstream and a stepped clock beside the model.
type modelRun struct {
	tr      *Tier
	up      *fakeUpstream
	clock   *clocktest.Clock
	m       *tierModel
	keys    *rapid.Generator[string]
	stores  uint64
	version int
}

func (r *modelRun) newValue() []byte {
	r.version++
	b, _ := value.Encode(value.Value{Object: fmt.Appendf(nil, "object %d", r.version)})
	return b
}

func (r *modelRun) store(rt *rapid.T) {
	k, v := r.keys.Draw(rt, "key"), r.newValue()
	if reply := r.tr.ServeFrom(bg, loopbackPeer, storeReq(k, "", "", v)); reply.Status != wire.StatusOk {
		rt.Fatalf("STORE answered %s", reply.Status)
	}
	r.stores++
	waitOffers(rt, r.tr, r.stores)
	r.m.local[k] = v
	if now := r.clock.Now(); r.m.admits(now) && r.m.exchange(now) {
		r.m.upstream[k] = v
	}
}

func (r *modelRun) fetch(rt *rapid.T) {
	k := r.keys.Draw(rt, "key")
	want, hit := r.m.local[k]
	if now := r.clock.Now(); !hit && r.m.admits(now) && r.m.exchange(now) {
		if want, hit = r.m.upstream[k]; hit {
			r.m.local[k] = want
		}
	}
	reply := r.tr.ServeFrom(bg, loopbackPeer, fetchReq(k))
	if hit != (reply.Status == wire.StatusOk) || (hit && !bytes.Equal(reply.Payload, want)) {
		rt.Fatalf("FETCH %s answered %s %q; the model says hit=%v %q", k, reply.Status, reply.Payload, hit, want)
	}
}

func (r *modelRun) drop(rt *rapid.T) {
	k := r.keys.Draw(rt, "key")
	_, present := r.m.local[k]
	delete(r.m.local, k)
	if reply := r.tr.ServeFrom(bg, loopbackPeer, dropReq(k)); (reply.Status == wire.StatusOk) != present {
		rt.Fatalf("CACHE-DROP %s answered %s; present=%v", k, reply.Status, present)
	}
}

func (r *modelRun) storeElsewhere(rt *rapid.T) {
	k, v := r.keys.Draw(rt, "key"), r.newValue()
	r.up.put(k, v)
	r.m.upstream[k] = v
}

func (r *modelRun) flipUpstream(*rapid.T) {
	r.m.reachable = !r.m.reachable
	if r.m.reachable {
		r.up.setFail(nil)
	} else {
		r.up.setFail(errFakeUnreachable)
	}
}

func (r *modelRun) passTime(rt *rapid.T) {
	r.clock.Advance(time.Duration(rapid.Int64Range(0, int64(12*time.Second)).Draw(rt, "step")))
}

func (r *modelRun) check(rt *rapid.T) {
	if r.tr.UpstreamDown() != !r.m.downUntil.IsZero() {
		rt.Fatalf("tier down=%v, model down until %v", r.tr.UpstreamDown(), r.m.downUntil)
	}
	if s := r.tr.Snapshot(); s.UpstreamStores+s.UpstreamStoreFailures != r.stores {
		rt.Fatalf("%d offers accounted for, %d stores", s.UpstreamStores+s.UpstreamStoreFailures, r.stores)
	}
}

// Property: for any sequence of stores, fetches, drops, upstream outages, other machines'
// stores and clock steps, the tier answers exactly what the model of pace-node §4 says.
func TestTierFollowsTheRules(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		r := &modelRun{up: newFakeUpstream(), clock: newFakeClock(), keys: rapid.SampledFrom([]string{"a", "b", "c", "d"}),
			m: &tierModel{local: map[string][]byte{}, upstream: map[string][]byte{}, reachable: true}}
		var err error
		r.tr, err = open(Config{MaxMemory: 64 << 20, HostAddrs: noHostAddrs, Upstream: "fake.invalid:1", Now: r.clock.Now}, r.up)
		if err != nil {
			rt.Fatal(err)
		}
		defer r.tr.Close(bg)
		rt.Repeat(map[string]func(*rapid.T){
			"store": r.store, "fetch": r.fetch, "drop": r.drop, "store elsewhere": r.storeElsewhere,
			"flip upstream": r.flipUpstream, "pass time": r.passTime, "": r.check,
		})
	})
}

// waitOffers waits until every store so far has been offered upstream (or skipped).
func waitOffers(rt *rapid.T, tr *Tier, stores uint64) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := tr.Snapshot()
		if s.UpstreamStores+s.UpstreamStoreFailures == stores {
			return
		}
		if time.Now().After(deadline) {
			rt.Fatalf("offers never finished: %+v", s)
		}
		time.Sleep(100 * time.Microsecond)
	}
}
