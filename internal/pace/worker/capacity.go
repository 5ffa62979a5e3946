package worker

import "github.com/buildfleet/buildfleet/internal/pace/verbs"

// Sizes of the derivations (pace-node §5.1, pace-node §5.2, pace-wire §5.11).
const (
	// MemoryPerSlot is the RAM one derived slot needs.
	MemoryPerSlot = 1 << 30
	// DefaultCeiling is the per-request ceiling C: the session cap.
	DefaultCeiling = 256 << 20
	// BudgetPerSlot is what the default budget allows each slot.
	BudgetPerSlot = 256 << 20
)

// Host is what the node knows about its machine when it sizes the worker.
type Host struct {
	LogicalCores int
	MemoryTotal  uint64 // bytes; 0 = unknown
	// TierResident is what the node's cache tier may keep resident in
	// memory (its memory budget), taken off before slots are derived.
	TierResident uint64
}

// ClassReserve is the cores a node class keeps back from compiles:
// workstation 2, dedicated 0.
func ClassReserve(class verbs.NodeClass) int {
	if class == verbs.ClassDedicated {
		return 0
	}
	return 2
}

// DeriveSlots is the default --slots (pace-node §5.1): min(logical cores,
// floor((RAM − tier resident bytes) / 1 GiB)) − reserve, never below 1.
// reserve is --reserve-cores when given, else ClassReserve. An unknown
// memory size limits nothing.
func DeriveSlots(h Host, reserve int) int {
	slots := max(h.LogicalCores, 1)
	if h.MemoryTotal > 0 {
		var free uint64
		if h.MemoryTotal > h.TierResident {
			free = h.MemoryTotal - h.TierResident
		}
		if byMemory := free / MemoryPerSlot; byMemory < uint64(slots) {
			slots = int(byMemory)
		}
	}
	return max(slots-max(reserve, 0), 1)
}

// DefaultBudget is the default --compile-inflight-max: min(25% of RAM,
// slots × 256 MiB) (pace-wire §5.11), so every slot can hold a request
// of the full ceiling on a machine with the memory for it, and the budget
// never claims more than a quarter of the machine. Unknown memory gives
// slots × 256 MiB. The result is never below 1 MiB.
func DefaultBudget(h Host, slots int) uint64 {
	b := uint64(max(slots, 1)) * BudgetPerSlot
	if h.MemoryTotal > 0 {
		b = min(b, h.MemoryTotal/4)
	}
	return max(b, 1<<20)
}

// Ceiling is the per-request ceiling C: 256 MiB, never above the surface's
// session cap nor the budget (so a declared expansion above the whole
// budget is payload-too-large, never endpoint-busy).
func Ceiling(sessionCap uint32, budget uint64) uint64 {
	return min(uint64(DefaultCeiling), uint64(sessionCap), budget)
}
