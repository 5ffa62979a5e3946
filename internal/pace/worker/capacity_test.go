package worker

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"pgregory.net/rapid"
)

const gib = 1 << 30

// TestDeriveSlots follows pace-node §5.1: min(cores, floor((RAM − tier)/1 GiB))
// − reserve, never below 1.
func TestDeriveSlots(t *testing.T) {
	cases := []struct {
		name    string
		host    Host
		reserve int
		want    int
	}{
		{"cores bound", Host{LogicalCores: 16, MemoryTotal: 64 * gib}, 2, 14},
		{"memory bound", Host{LogicalCores: 32, MemoryTotal: 8 * gib}, 0, 8},
		{"tier resident taken off", Host{LogicalCores: 32, MemoryTotal: 12 * gib, TierResident: 4 * gib}, 2, 6},
		{"partial GiB rounds down", Host{LogicalCores: 32, MemoryTotal: 6*gib - 1}, 0, 5},
		{"dedicated reserves none", Host{LogicalCores: 8, MemoryTotal: 64 * gib}, ClassReserve(verbs.ClassDedicated), 8},
		{"workstation reserves two", Host{LogicalCores: 8, MemoryTotal: 64 * gib}, ClassReserve(verbs.ClassWorkstation), 6},
		{"never below one", Host{LogicalCores: 2, MemoryTotal: 64 * gib}, 2, 1},
		{"tier larger than RAM", Host{LogicalCores: 8, MemoryTotal: 2 * gib, TierResident: 3 * gib}, 0, 1},
		{"unknown memory limits nothing", Host{LogicalCores: 4}, 1, 3},
		{"unknown cores", Host{MemoryTotal: 64 * gib}, 0, 1},
	}
	for _, tc := range cases {
		if got := DeriveSlots(tc.host, tc.reserve); got != tc.want {
			t.Errorf("%s: DeriveSlots = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestDefaultBudgetAndCeiling(t *testing.T) {
	if got := DefaultBudget(Host{MemoryTotal: 64 * gib}, 4); got != 4*BudgetPerSlot {
		t.Errorf("slots bound: %d", got)
	}
	if got := DefaultBudget(Host{MemoryTotal: 2 * gib}, 16); got != gib/2 {
		t.Errorf("a quarter of RAM: %d", got)
	}
	if got := DefaultBudget(Host{}, 2); got != 2*BudgetPerSlot {
		t.Errorf("unknown RAM: %d", got)
	}
	if got := Ceiling(1<<30, 1<<40); got != DefaultCeiling {
		t.Errorf("ceiling above 256 MiB: %d", got)
	}
	if got := Ceiling(1<<20, 1<<40); got != 1<<20 {
		t.Errorf("ceiling above the session cap: %d", got)
	}
	if got := Ceiling(1<<30, 1<<16); got != 1<<16 {
		t.Errorf("ceiling above the budget: %d", got)
	}
}

// TestBudgetNeverOvercommits: whatever order charges grow and release in,
// the budget never holds more than its limit and returns to zero.
func TestBudgetNeverOvercommits(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		limit := rapid.Uint64Range(1, 1<<20).Draw(t, "limit")
		b := newBudget(limit, newClock().Now)
		var charges []*charge
		for range rapid.IntRange(0, 50).Draw(t, "steps") {
			if len(charges) > 0 && rapid.Bool().Draw(t, "release") {
				i := rapid.IntRange(0, len(charges)-1).Draw(t, "which")
				charges[i].release()
				charges = append(charges[:i], charges[i+1:]...)
			} else {
				c := &charge{b: b}
				c.to(rapid.Uint64Range(0, 1<<19).Draw(t, "first"))
				c.to(rapid.Uint64Range(0, 1<<20).Draw(t, "then"))
				charges = append(charges, c)
			}
			var held uint64
			for _, c := range charges {
				held += c.held
			}
			if used := b.inUse(); used != held || used > limit {
				t.Fatalf("budget says %d in use, charges hold %d, limit %d", used, held, limit)
			}
		}
		for _, c := range charges {
			c.release()
		}
		if b.inUse() != 0 {
			t.Fatalf("%d bytes left after every release", b.inUse())
		}
	})
}
