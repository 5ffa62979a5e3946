package node

import (
	"flag"
	"slices"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/store"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
	"github.com/buildfleet/buildfleet/internal/pace/worker"
)

func workerFlags(t *testing.T, args ...string) worker.Flags {
	t.Helper()
	var f worker.Flags
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	f.Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestTheCapacityRecordSaysWhatTheMachineIs(t *testing.T) {
	tiers := store.Stats{Memory: store.TierStats{Enabled: true, Limit: 64 << 20}, Disk: store.TierStats{Enabled: true, Limit: 10 << 30}}
	host := worker.Host{LogicalCores: 8, MemoryTotal: 16 << 30}
	c := capacityRecord("gcc 12", workerFlags(t, "--node-class=dedicated", "--reserve-cores=1"), host, tiers, "builder-7", []string{"10.0.0.7"})
	switch {
	case c.NodeClass != verbs.Some(uint8(verbs.ClassDedicated)):
		t.Errorf("class %+v", c.NodeClass)
	case c.ReservedCores != verbs.Some(uint32(1)):
		t.Errorf("reserve %+v", c.ReservedCores)
	case c.LogicalCores != verbs.Some(uint32(8)) || c.TotalMemory != verbs.Some(uint64(16<<30)):
		t.Errorf("cores %+v memory %+v", c.LogicalCores, c.TotalMemory)
	case !slices.Equal(c.CacheTiers, []verbs.TierLimit{{Present: true, BytesLimit: 64 << 20}, {Present: true, BytesLimit: 10 << 30}}):
		t.Errorf("cache budgets %+v", c.CacheTiers)
	case c.DisplayName != "builder-7" || !slices.Equal(c.InterfaceAddrs, []string{"10.0.0.7"}) || c.Version != Version:
		t.Errorf("name %q addrs %v version %q", c.DisplayName, c.InterfaceAddrs, c.Version)
	}
	// Round trip: the scheduler reads back what was sent.
	req := verbs.RegisterRequest{Fingerprint: "fp", Endpoint: "10.0.0.7:6674", Slots: 2, Codecs: wire.NewCodecList(wire.CodecZstd), Capacity: c}
	fields, err := splitPayload(wire.OpRegister, req.Append(nil))
	if err != nil {
		t.Fatal(err)
	}
	back, err := verbs.ParseRegister(fields)
	if err != nil {
		t.Fatal(err)
	}
	if back.Capacity.NodeClass != c.NodeClass || back.Capacity.ReservedCores != c.ReservedCores || !slices.Equal(back.Capacity.CacheTiers, c.CacheTiers) {
		t.Errorf("read back %+v", back.Capacity)
	}
}

func TestTheCapacityRecordLeavesTheReserveToTheClassWhenNoneWasGiven(t *testing.T) {
	c := capacityRecord("gcc", workerFlags(t), worker.Host{}, store.Stats{}, "h", nil)
	if c.ReservedCores.Present || c.NodeClass != verbs.Some(uint8(verbs.ClassWorkstation)) {
		t.Errorf("reserve %+v class %+v", c.ReservedCores, c.NodeClass)
	}
	if c.LogicalCores.Present || c.TotalMemory.Present {
		t.Errorf("unknown cores and memory sent as %+v %+v", c.LogicalCores, c.TotalMemory)
	}
	if !slices.Equal(c.CacheTiers, []verbs.TierLimit{{}, {}}) {
		t.Errorf("a node without a tier reports budgets %+v", c.CacheTiers)
	}
}
