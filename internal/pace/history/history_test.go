package history

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

const minute = Width

func TestAnOutboxHandsEachClosedMinuteToTheLeaderUntilAcknowledged(t *testing.T) {
	var o Outbox
	t0 := int64(1_800_000_000_000) // a minute boundary
	o.Close(t0+500, Values{CacheItems: 1})
	o.Close(t0+minute+200, Values{CacheItems: 2})
	got := o.Pending("n1")
	if len(got) != 2 || got[0].StartMs != uint64(t0-minute) || got[1].StartMs != uint64(t0) || got[1].Values[CacheItems] != 2 {
		t.Fatalf("pending %+v", got)
	}
	if got[0].SampleMs != uint64(t0+500) {
		t.Errorf("sample time %d", got[0].SampleMs)
	}
	o.Acknowledged("n1", got[0].StartMs)
	if p := o.Pending("n1"); len(p) != 1 || p[0].StartMs != uint64(t0) {
		t.Fatalf("after the first was acknowledged: %+v", p)
	}
	if p := o.Pending("n2"); len(p) != 2 {
		t.Fatalf("another leader is handed everything kept; got %d buckets", len(p))
	}
	o.Acknowledged("n2", got[1].StartMs)
	if p := o.Pending("n1"); len(p) != 2 {
		t.Fatalf("back to the first leader after another acknowledged: %d buckets; want everything kept", len(p))
	}
}

func TestAnOutboxIgnoresAMinuteItHoldsAndAClockThatSteppedBack(t *testing.T) {
	var o Outbox
	t0 := int64(1_800_000_000_000)
	o.Close(t0+minute, Values{CacheItems: 1})
	o.Close(t0+minute+30_000, Values{CacheItems: 9}) // the same minute again
	o.Close(t0, Values{CacheItems: 7})               // an earlier minute
	p := o.Pending("n")
	if len(p) != 1 || p[0].Values[CacheItems] != 1 {
		t.Fatalf("pending %+v", p)
	}
}

func TestAFullOutboxDropsItsOldestBucket(t *testing.T) {
	var o Outbox
	t0 := int64(1_800_000_000_000)
	for i := range verbs.MaxHistoryBuckets + 5 {
		o.Close(t0+int64(i)*minute, Values{CacheItems: uint64(i)})
	}
	p := o.Pending("n")
	if len(p) != verbs.MaxHistoryBuckets || p[0].Values[CacheItems] != 5 {
		t.Fatalf("%d buckets, oldest %d", len(p), p[0].Values[CacheItems])
	}
}

// TestOutboxProperties: whatever order minutes are closed and delivered in, an outbox holds at
// most a heartbeat's worth, in strictly increasing order.
func TestOutboxProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var o Outbox
		starts := rapid.SliceOfN(rapid.Int64Range(0, 3000), 1, 400).Draw(t, "minutes")
		for i, m := range starts {
			o.Close(m*minute+1, Values{CacheItems: uint64(i)})
			if rapid.Bool().Draw(t, "deliver") {
				if p := o.Pending("n"); len(p) > 0 {
					o.Acknowledged("n", p[len(p)-1].StartMs)
				}
			}
		}
		p := o.Pending("n")
		if len(p) > verbs.MaxHistoryBuckets {
			t.Fatalf("%d pending", len(p))
		}
		for i := 1; i < len(p); i++ {
			if p[i-1].StartMs >= p[i].StartMs {
				t.Fatalf("outbox out of order at %d", i)
			}
		}
	})
}
