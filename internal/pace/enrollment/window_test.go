package enrollment

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"pgregory.net/rapid"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func key(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

func ask(id string, k byte, host string) Ask {
	return Ask{ID: id, NodeEndpoint: host + ":6674", RaftEndpoint: host + ":6680", Key: key(k), Host: netip.MustParseAddr(host)}
}

func newWindow() (*Window, *Counters) {
	c := &Counters{}
	return New(rand.Reader, c), c
}

func TestAskRecordsAndAnswersPending(t *testing.T) {
	w, _ := newWindow()
	a, err := w.Ask(ask("j1", 1, "10.0.0.2"), t0)
	if err != nil || a.Decision != verbs.RowPending || a.Admit {
		t.Fatalf("first ask: %+v %v", a, err)
	}
	again, _ := w.Ask(ask("j1", 1, "10.0.0.2"), t0.Add(time.Second))
	if again.Row.Attempts != 2 || again.Challenge != a.Challenge {
		t.Fatalf("a poll without the challenge keeps it: %+v", again)
	}
	answered := ask("j1", 1, "10.0.0.2")
	answered.Challenge = a.Challenge[:]
	next, _ := w.Ask(answered, t0.Add(2*time.Second))
	if next.Challenge == a.Challenge {
		t.Fatal("a challenge answered must be replaced")
	}
}

func TestARowKeepsItsFirstKey(t *testing.T) {
	w, _ := newWindow()
	w.Ask(ask("j1", 1, "10.0.0.2"), t0)
	a, err := w.Ask(ask("j1", 2, "10.0.0.9"), t0)
	if err != nil || a.Decision != verbs.RowPending {
		t.Fatalf("another key under the id: %+v %v", a, err)
	}
	rows := w.Rows()
	if len(rows) != 1 || !bytes.Equal(rows[0].Key, key(1)) || rows[0].ClaimsChanged != 1 || rows[0].Attempts != 1 {
		t.Fatalf("the row took the second claim: %+v", rows)
	}
	if _, err := w.Approve("j1", key(2)); !errors.Is(err, ErrKeyMismatch) {
		t.Fatalf("approving under the second key: %v", err)
	}
}

func TestBounds(t *testing.T) {
	t.Run("four undecided per first-seen host", func(t *testing.T) {
		w, c := newWindow()
		for i := range MaxUndecidedHost {
			if _, err := w.Ask(ask(fmt.Sprint("j", i), byte(i), "10.0.0.2"), t0); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Ask(ask("j9", 9, "10.0.0.2"), t0); !errors.Is(err, ErrHostFull) || c.RefusedHostCap.Load() != 1 {
			t.Fatalf("a fifth from the host: %v", err)
		}
		if _, err := w.Ask(ask("k1", 10, "10.0.0.3"), t0); err != nil {
			t.Fatalf("another host is still heard: %v", err)
		}
	})
	t.Run("sixty-four rows", func(t *testing.T) {
		w, c := newWindow()
		for i := range MaxRows {
			host := netip.AddrFrom4([4]byte{10, 1, byte(i), 1}).String()
			if _, err := w.Ask(ask(fmt.Sprint("j", i), byte(i), host), t0); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Ask(ask("late", 200, "10.2.0.1"), t0); !errors.Is(err, ErrFull) || c.RefusedFull.Load() != 1 {
			t.Fatalf("row 65: %v", err)
		}
	})
}

func TestExpiryDropsOnlyUndecidedRows(t *testing.T) {
	w, c := newWindow()
	w.Ask(ask("j1", 1, "10.0.0.2"), t0)
	w.Ask(ask("j2", 2, "10.0.0.3"), t0)
	w.Approve("j2", key(2))
	w.Ask(ask("j1", 1, "10.0.0.2"), t0.Add(5*time.Minute)) // polled: its ten minutes restart
	w.Expire(t0.Add(14 * time.Minute))
	if len(w.Rows()) != 2 {
		t.Fatalf("a row polled 9 minutes ago expired: %+v", w.Rows())
	}
	w.Expire(t0.Add(15 * time.Minute))
	rows := w.Rows()
	if len(rows) != 1 || rows[0].ID != "j2" || c.Expired.Load() != 1 {
		t.Fatalf("after ten minutes unpolled: %+v (expired %d)", rows, c.Expired.Load())
	}
}

func TestAutomaticWindow(t *testing.T) {
	w, c := newWindow()
	w.Ask(ask("waiting", 1, "10.0.0.2"), t0)
	if _, err := w.AutoApprove(25*time.Hour, t0); !errors.Is(err, ErrWindowLong) {
		t.Fatalf("a window over a day: %v", err)
	}
	approved, err := w.AutoApprove(time.Hour, t0)
	if err != nil || len(approved) != 1 || approved[0].ID != "waiting" {
		t.Fatalf("rows already waiting are approved with the window: %+v %v", approved, err)
	}
	a, _ := w.Ask(ask("new", 2, "10.0.0.3"), t0.Add(time.Minute))
	if a.Decision != verbs.RowApproved || !a.Admit {
		t.Fatalf("a machine asking inside the window: %+v", a)
	}
	w.Revert("new")
	if a, _ := w.Ask(ask("late", 3, "10.0.0.4"), t0.Add(2*time.Hour)); a.Decision != verbs.RowPending {
		t.Fatalf("a machine asking after the window: %+v", a)
	}
	if c.ApprovalsAuto.Load() != 2 || w.AutoLeft(t0.Add(2*time.Hour)) != 0 {
		t.Fatalf("auto approvals %d", c.ApprovalsAuto.Load())
	}
}

func TestRejectAndClear(t *testing.T) {
	w, c := newWindow()
	if err := w.Reject("nobody"); !errors.Is(err, ErrNoRow) {
		t.Fatalf("rejecting nobody: %v", err)
	}
	w.Ask(ask("j1", 1, "10.0.0.2"), t0)
	w.Reject("j1")
	if a, _ := w.Ask(ask("j1", 1, "10.0.0.2"), t0); a.Decision != verbs.RowRejected {
		t.Fatalf("a rejected row polls: %+v", a)
	}
	if n := w.Clear(); n != 1 || c.Cleared.Load() != 1 || len(w.Rows()) != 0 {
		t.Fatalf("clear: %d", n)
	}
}

// TestPropertyTheListStaysBounded: whatever machines ask, from wherever, the list never holds
// more than 64 rows, never more than four undecided rows first seen from one host, and never
// two rows for one id.
func TestPropertyTheListStaysBounded(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w, _ := newWindow()
		now := t0
		for range rapid.IntRange(1, 300).Draw(t, "asks") {
			id := fmt.Sprint("n", rapid.IntRange(0, 80).Draw(t, "id"))
			host := netip.AddrFrom4([4]byte{10, 0, 0, byte(rapid.IntRange(0, 20).Draw(t, "host"))}).String()
			now = now.Add(time.Duration(rapid.IntRange(0, 120).Draw(t, "seconds")) * time.Second)
			w.Ask(ask(id, byte(rapid.IntRange(0, 3).Draw(t, "key")), host), now)
			if rapid.Bool().Draw(t, "decide") {
				w.Reject(id)
			}
		}
		rows, ids, perHost := w.Rows(), map[string]bool{}, map[netip.Addr]int{}
		if len(rows) > MaxRows {
			t.Fatalf("%d rows", len(rows))
		}
		for _, r := range rows {
			if ids[r.ID] {
				t.Fatalf("two rows for %s", r.ID)
			}
			ids[r.ID] = true
			if r.Decision == verbs.RowPending {
				perHost[r.FirstHost]++
			}
		}
		for h, n := range perHost {
			if n > MaxUndecidedHost {
				t.Fatalf("%d undecided rows from %s", n, h)
			}
		}
	})
}
