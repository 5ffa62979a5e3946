package loghub

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func chunk(attempt string, offset int64, s string) Chunk {
	return Chunk{Attempt: attempt, Offset: offset, Data: []byte(s)}
}

func TestPublishReachesEveryFollowerOfTheBuildInOrder(t *testing.T) {
	h := New(Limits{})
	a, b := mustSub(t, h, "b1"), mustSub(t, h, "b1")
	other := mustSub(t, h, "b2")
	h.Publish("b1", chunk("at", 0, "one "))
	h.Publish("b1", chunk("at", 4, "two"))
	h.Publish("b1", chunk("at", 7, "")) // nothing to say: no wake
	for _, s := range []*Subscription{a, b} {
		select {
		case <-s.Wake():
		default:
			t.Fatal("a follower was not woken")
		}
		got := s.Take()
		if len(got.Chunks) != 2 || string(got.Chunks[0].Data) != "one " || got.Chunks[1].Offset != 4 || got.Lagged || got.Changed {
			t.Errorf("batch %+v", got)
		}
		if again := s.Take(); len(again.Chunks) != 0 {
			t.Errorf("a second Take answered %+v", again)
		}
	}
	select {
	case <-other.Wake():
		t.Error("the follower of another build was woken")
	default:
	}
}

func TestCapsRefuseFollowers(t *testing.T) {
	cases := []struct {
		name   string
		limits Limits
		builds []string // subscribed in order; the last one is refused
	}{
		{"per build", Limits{PerBuild: 2, Total: 10}, []string{"x", "y", "x", "x"}},
		{"in total", Limits{PerBuild: 5, Total: 3}, []string{"x", "y", "z", "w"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := New(c.limits)
			var subs []*Subscription
			for _, b := range c.builds[:len(c.builds)-1] {
				subs = append(subs, mustSub(t, h, b))
			}
			last := c.builds[len(c.builds)-1]
			if _, err := h.Subscribe(last); !errors.Is(err, ErrBusy) || h.Counters().Refused.Load() != 1 {
				t.Fatalf("follower past the cap: err %v, refusals counted %d", err, h.Counters().Refused.Load())
			}
			subs[0].Close()
			subs[0].Close() // twice frees one slot only
			if n := h.Followers(); n != len(subs)-1 {
				t.Errorf("followers %d after a close, want %d", n, len(subs)-1)
			}
			mustSub(t, h, last) // the freed slot takes it

		})
	}
}

func TestChangedAndCloseWakeFollowers(t *testing.T) {
	h := New(Limits{})
	s := mustSub(t, h, "b")
	h.Changed("b")
	if got := s.Take(); !got.Changed || got.Closed {
		t.Errorf("after Changed: %+v", got)
	}
	if got := s.Take(); got.Changed {
		t.Errorf("Changed was reported twice")
	}
	h.Close()
	<-s.Wake()
	if got := s.Take(); !got.Closed {
		t.Errorf("after Close: %+v", got)
	}
	if got := s.Take(); !got.Closed {
		t.Errorf("Closed must stay reported: %+v", got)
	}
	if _, err := h.Subscribe("b"); !errors.Is(err, ErrClosed) {
		t.Errorf("Subscribe after Close: %v", err)
	}
}

// A follower that never takes must not hold the publisher back or make the hub hold more
// than its buffer: it lags, and the one that keeps up gets everything.
func TestStuckFollowerDoesNotBlockPublishing(t *testing.T) {
	h := New(Limits{Buffer: 64 << 10})
	stuck, live := mustSub(t, h, "b"), mustSub(t, h, "b")
	data := bytes.Repeat([]byte("x"), 4<<10)
	var got int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for off := int64(0); off < 64<<20; off += int64(len(data)) {
			h.Publish("b", Chunk{Attempt: "a", Offset: off, Data: data})
			for _, c := range live.Take().Chunks {
				got += int64(len(c.Data))
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("publishing 64 MiB with a stuck follower did not finish")
	}
	if got != 64<<20 {
		t.Errorf("the live follower got %d bytes, want all %d", got, 64<<20)
	}
	b := stuck.Take()
	if !b.Lagged || len(b.Chunks) != 0 {
		t.Errorf("the stuck follower: lagged %v with %d chunks", b.Lagged, len(b.Chunks))
	}
	if lagged := h.Counters().Lagged.Load(); lagged != 1 {
		t.Errorf("lagged %d times, want 1 (a lagging follower is not counted again)", lagged)
	}
}

// Whatever the interleaving, a follower holds at most its buffer, and what it takes without
// lagging is exactly what was published since its last Take.
func TestFollowerSeesAContiguousLogOrLags(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		buffer := rapid.IntRange(1, 64).Draw(t, "buffer")
		h := New(Limits{Buffer: buffer})
		s, _ := h.Subscribe("b")
		var off, taken int64
		for i, n := 0, rapid.IntRange(1, 60).Draw(t, "steps"); i < n; i++ {
			if rapid.Bool().Draw(t, "publish") {
				size := rapid.IntRange(0, 40).Draw(t, "size")
				h.Publish("b", Chunk{Attempt: "a", Offset: off, Data: make([]byte, size)})
				off += int64(size)
				if s.queued > buffer {
					t.Fatalf("queued %d past the buffer %d", s.queued, buffer)
				}
				continue
			}
			b := s.Take()
			if b.Lagged {
				taken = off
				continue
			}
			for _, c := range b.Chunks {
				if c.Offset != taken {
					t.Fatalf("chunk at %d, want %d", c.Offset, taken)
				}
				taken = c.End()
			}
			if taken != off {
				t.Fatalf("took up to %d of %d", taken, off)
			}
		}
	})
}

func mustSub(t *testing.T, h *Hub, build string) *Subscription {
	t.Helper()
	s, err := h.Subscribe(build)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
