package verbs

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// rec is a nested record's bytes (the field's content, without its prefix).
func rec(positions ...[]byte) []byte {
	return wire.AppendRecord(nil, positions...)[wire.FieldPrefixLen:]
}

func u32(v uint32) []byte { return wire.AppendU32Field(nil, v)[wire.FieldPrefixLen:] }
func u64(v uint64) []byte { return wire.AppendU64Field(nil, v)[wire.FieldPrefixLen:] }

var validRegister = RegisterRequest{Fingerprint: "gcc-13-x86_64", Endpoint: "10.0.0.7:6674", Slots: 8}

func registerWith(mutate func([][]byte) [][]byte) func() error {
	fields := fieldsOf(wire.OpRegister, validRegister.Append(nil), mutate)
	return func() error { _, err := ParseRegister(fields()); return err }
}

// capacityAt builds a capacity record whose position i is b.
func capacityAt(i int, b []byte) []byte {
	positions := make([][]byte, capacityPositions)
	positions[i] = b
	return rec(positions...)
}

// TestParseRegisterRefusals: kept text that is not UTF-8 or too long is
// malformed-registration naming the field (pace-wire §1.4; pace-node §6.1);
// grammar faults are malformed-frame.
func TestParseRegisterRefusals(t *testing.T) {
	mr, mf := wire.CodeMalformedRegistration, wire.CodeMalformedFrame
	checkRefusals(t, []refusalCase{
		{"fingerprint not UTF-8", registerWith(set(0, notUTF8)), "fingerprint", mr, false},
		{"fingerprint 65 bytes", registerWith(set(0, text(65))), "fingerprint", mr, true},
		{"endpoint not UTF-8", registerWith(set(1, append([]byte("h\xc3:1"), 0))), "endpoint", mr, false},
		{"endpoint 261 bytes", registerWith(set(1, append(text(256), ":6674"...))), "endpoint", mr, true},
		{"endpoint without port", registerWith(set(1, []byte("10.0.0.7"))), "endpoint", mr, false},
		{"endpoint port 0", registerWith(set(1, []byte("10.0.0.7:0"))), "endpoint", mr, false},
		{"endpoint without host", registerWith(set(1, []byte(":6674"))), "endpoint", mr, false},
		{"slots 3 bytes", registerWith(set(2, []byte{0, 0, 8})), "slots", mf, false},
		{"17 codecs", registerWith(set(3, text(17))), "codecs", mf, true},
		{"capacity not a field list", registerWith(set(4, []byte{0, 0, 0, 9, 1})), "capacity", mf, false},
		{"version not UTF-8", registerWith(set(4, capacityAt(capVersion, notUTF8))), "capacity.version", mr, false},
		{"version 129 bytes", registerWith(set(4, capacityAt(capVersion, text(129)))), "capacity.version", mr, true},
		{"label 129 bytes", registerWith(set(4, capacityAt(capLabel, text(129)))), "capacity.toolchainLabel", mr, true},
		{"display name 256 bytes", registerWith(set(4, capacityAt(capDisplayName, text(256)))), "capacity.displayName", mr, true},
		{"cores 2 bytes", registerWith(set(4, capacityAt(capCores, []byte{0, 8}))), "capacity.logicalCores", mf, false},
		{"memory 4 bytes", registerWith(set(4, capacityAt(capTotalMemory, u32(1)))), "capacity.totalMemory", mf, false},
		{"33 interface addresses", registerWith(set(4, capacityAt(capInterfaces, list(repeat(33, []byte("10.0.0.7"))...)))),
			"capacity.interfaceAddresses", mr, true},
		{"interface address 65 bytes", registerWith(set(4, capacityAt(capInterfaces, list(text(65))))), "capacity.interfaceAddresses", mr, true},
		{"tier limit 4 bytes", registerWith(set(4, capacityAt(capCache, rec(list(rec(u32(1))))))), "capacity.cacheCapacity.bytesLimit", mf, false},
		{"17 tiers", registerWith(set(4, capacityAt(capCache, rec(list(repeat(17, nil)...))))), "capacity.cacheCapacity.tiers", mf, true},
	})
}

// TestCapacityVariableArity: a reader takes the positions it knows,
// leaves missing ones absent, and ignores surplus ones (pace-wire §1.4).
func TestCapacityVariableArity(t *testing.T) {
	for _, tc := range []struct {
		name   string
		record []byte
		want   Capacity
	}{
		{"empty record", nil, Capacity{}},
		{"cores only", rec(u32(16)), Capacity{LogicalCores: Some[uint32](16)}},
		{"zero is not absent", rec(u32(0), nil), Capacity{LogicalCores: Some[uint32](0)}},
		{"absent stays absent", rec(nil, u64(1<<30)), Capacity{TotalMemory: Some[uint64](1 << 30)}},
		{"surplus positions ignored", rec(append(make([][]byte, capacityPositions), []byte("future"), []byte{1, 2, 3})...), Capacity{}},
		{"tiers: memory absent, disk unbounded", capacityAt(capCache, rec(list(nil, rec(u64(0))))),
			Capacity{CacheTiers: []TierLimit{{}, {Present: true, BytesLimit: 0}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := validRegister
			fields := fieldsOf(wire.OpRegister, req.Append(nil), set(4, tc.record))()
			got, err := ParseRegister(fields)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Capacity, diffOpts); diff != "" {
				t.Fatalf("capacity (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseRegisterOk(t *testing.T) {
	surplus := append(RegisterOk{WorkerID: "w", ClusterID: "c", Epoch: 3}.Append(nil), wire.AppendStringField(nil, "later")...)
	if got, err := ParseRegisterOk(surplus); err != nil || got.Epoch != 3 || got.WorkerID != "w" {
		t.Fatalf("surplus positions: %+v, %v", got, err)
	}
	short := wire.AppendStringField(wire.AppendStringField(nil, "w"), "c")
	checkRefusals(t, []refusalCase{
		{"two fields", func() error { _, err := ParseRegisterOk(short); return err }, "body", wire.CodeMalformedFrame, false},
		{"epoch 4 bytes", func() error {
			_, err := ParseRegisterOk(append(short, wire.AppendU32Field(nil, 3)...))
			return err
		}, "epoch", wire.CodeMalformedFrame, false},
	})
}

var validHeartbeat = HeartbeatRequest{WorkerID: "w1", InFlight: 2}

func heartbeatWith(mutate func([][]byte) [][]byte) func() error {
	fields := fieldsOf(wire.OpHeartbeat, validHeartbeat.Append(nil), mutate)
	return func() error { _, err := ParseHeartbeat(fields()); return err }
}

func loadAt(i int, b []byte) []byte {
	positions := make([][]byte, loadPositions)
	positions[i] = b
	return rec(positions...)
}

func bucket(packed int) []byte { return rec(u64(60000), u64(60000), make([]byte, packed)) }

func TestParseHeartbeatRefusals(t *testing.T) {
	mf := wire.CodeMalformedFrame
	checkRefusals(t, []refusalCase{
		{"worker id 65 bytes", heartbeatWith(set(0, text(65))), "workerId", mf, true},
		{"in-flight 8 bytes", heartbeatWith(set(1, u64(1))), "inFlight", mf, false},
		{"cpu above 1000 permille", heartbeatWith(set(2, loadAt(loadCPU, u32(1001)))), "load.cpuBusyPermille", mf, false},
		{"cordoned byte 02", heartbeatWith(set(2, loadAt(loadCordoned, []byte{2}))), "load.cordoned", mf, false},
		{"129 history buckets", heartbeatWith(set(2, loadAt(loadHistory, list(repeat(129, bucket(80))...)))), "load.history", mf, true},
		{"bucket of 79 packed bytes", heartbeatWith(set(2, loadAt(loadHistory, list(bucket(79))))), "load.history.packed", mf, false},
		{"bucket of 9 series", heartbeatWith(set(2, loadAt(loadHistory, list(bucket(72))))), "load.history.packed", mf, false},
		{"bucket without start", heartbeatWith(set(2, loadAt(loadHistory, list(rec(nil, u64(1), make([]byte, 80)))))),
			"load.history.startMs", mf, false},
		{"tier load items 4 bytes", heartbeatWith(set(2, loadAt(loadCache, rec(list(rec(u32(1))))))), "load.cacheLoad.items", mf, false},
	})
}

func TestParseHeartbeatAccepts(t *testing.T) {
	history := list(repeat(MaxHistoryBuckets, bucket((HistorySeries+1)*8))...) // a surplus series ignored
	fields := fieldsOf(wire.OpHeartbeat, validHeartbeat.Append(nil), set(2, loadAt(loadHistory, history)))()
	got, err := ParseHeartbeat(fields)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Load.History) != MaxHistoryBuckets || got.Load.History[0].StartMs != 60000 || got.Load.History[0].Absent != 0 {
		t.Fatalf("history: %d buckets, first %+v", len(got.Load.History), got.Load.History[0])
	}
	if got.Load.CPUBusyPermille.Present || got.Load.AvailableMemory.Present {
		t.Fatalf("unsaid load figures must be absent (unknown), got %+v", got.Load)
	}
	// A said zero CPU figure, then one position more than this build knows.
	surplus := rec(append([][]byte{u32(0)}, make([][]byte, loadPositions)...)...)
	fields = fieldsOf(wire.OpHeartbeat, validHeartbeat.Append(nil), set(2, surplus))()
	if got, err = ParseHeartbeat(fields); err != nil || !got.Load.CPUBusyPermille.Present || got.Load.CPUBusyPermille.Value != 0 {
		t.Fatalf("a said zero with surplus positions: %+v, %v", got.Load.CPUBusyPermille, err)
	}
}

// TestAnOlderNodesShorterPackingIsReadWithItsMissingSeriesAbsent: a node built before the
// CPU ticks and slot refusals packs ten series; the bucket is read, the three it left out
// marked absent, and packing it again writes the same ten.
func TestAnOlderNodesShorterPackingIsReadWithItsMissingSeriesAbsent(t *testing.T) {
	packed := make([]byte, MinHistorySeries*8)
	packed[len(packed)-1] = 7 // the tenth series, free scratch
	old := list(rec(u64(60000), u64(61000), packed))
	fields := fieldsOf(wire.OpHeartbeat, validHeartbeat.Append(nil), set(2, loadAt(loadHistory, old)))()
	got, err := ParseHeartbeat(fields)
	if err != nil {
		t.Fatal(err)
	}
	b := got.Load.History[0]
	if b.Absent != HistorySeries-MinHistorySeries || b.Values[MinHistorySeries-1] != 7 {
		t.Fatalf("bucket %+v: want the tenth series 7 and %d absent", b, HistorySeries-MinHistorySeries)
	}
	if again := appendHistory(nil, got.Load.History); !bytes.Equal(again[wire.FieldPrefixLen:], old) {
		t.Fatalf("re-packed as %x; want the ten series it came with, %x", again, old)
	}
}

func TestParseAnnounceRefusals(t *testing.T) {
	payload := AnnounceRequest{Endpoint: "10.0.0.7:6674"}.Append(nil)
	announce := func(m func([][]byte) [][]byte) func() error {
		fields := fieldsOf(wire.OpNodeAnnounce, payload, m)
		return func() error { _, err := ParseAnnounce(fields()); return err }
	}
	memo := rec([]byte("cluster"), make([]byte, KeyLen))
	mf := wire.CodeMalformedFrame
	checkRefusals(t, []refusalCase{
		{"endpoint 261 bytes", announce(set(0, append(text(256), ":6674"...))), "endpoint", mf, true},
		{"9 join memos", announce(set(3, list(repeat(9, memo)...))), "joinMemos", mf, true},
		{"memo key 31 bytes", announce(set(3, list(rec([]byte("c"), make([]byte, 31))))), "joinMemos.key", mf, false},
		{"memo cluster id empty", announce(set(3, list(rec(nil, make([]byte, KeyLen))))), "joinMemos.clusterId", mf, false},
		{"memo cluster id 65 bytes", announce(set(3, list(rec(text(65), make([]byte, KeyLen))))), "joinMemos.clusterId", mf, true},
	})
}

func TestParseWithdrawRefusals(t *testing.T) {
	checkRefusals(t, []refusalCase{
		{"empty id", func() error { _, err := ParseWithdraw([][]byte{nil}); return err }, "workerId", wire.CodeMalformedFrame, false},
		{"id not UTF-8", func() error { _, err := ParseWithdraw([][]byte{notUTF8}); return err }, "workerId", wire.CodeMalformedFrame, false},
	})
}
