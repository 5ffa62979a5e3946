package fleet

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
	"github.com/google/go-cmp/cmp"
)

func sampleCommands() []Command {
	return []Command{
		Found{ClusterID: testCluster, ID: "n1", RaftEndpoint: "10.0.0.1:6680", NodeEndpoint: "10.0.0.1:6674", Key: testKey(1)},
		Found{ClusterID: testCluster, ID: "n1", Key: testKey(1)},
		Admit{ID: "n2", Seat: Voter, RaftEndpoint: "10.0.0.2:6680", Key: testKey(2)},
		Admit{ID: "n2", Seat: Learner, RaftEndpoint: "10.0.0.2:6680"},
		Forget{ID: "n2"},
		Forget{ID: "\xff\xfe"},
		Set{Name: "lease-lifetime", Value: "20min"},
		Announce{ID: "n1", Seq: 1 << 40, RaftEndpoint: "[::1]:6680", NodeEndpoint: "[::1]:6674", SchedulerEndpoint: "[::1]:6674"},
	}
}

func TestCommandRoundTrip(t *testing.T) {
	for _, c := range sampleCommands() {
		b := EncodeCommand(nil, c)
		got, err := DecodeCommand(b)
		if err != nil {
			t.Fatalf("%T: %v", c, err)
		}
		if diff := cmp.Diff(c, got); diff != "" {
			t.Fatalf("%T round trip: %s", c, diff)
		}
		if !bytes.Equal(EncodeCommand(nil, got), b) {
			t.Fatalf("%T re-encodes differently", c)
		}
	}
}

// TestDecodeCommandRefuses: every structural fault is ErrMalformed, never a
// panic and never a partly read command.
func TestDecodeCommandRefuses(t *testing.T) {
	admit := EncodeCommand(nil, Admit{ID: "n2", Seat: Voter, RaftEndpoint: "h:1", Key: testKey(2)})
	admitWith := func(seat, key []byte) []byte {
		b := wire.AppendStringField([]byte{CommandVersion, byte(KindAdmit)}, "n2")
		b = wire.AppendField(b, seat)
		b = wire.AppendStringField(b, "h:1")
		return wire.AppendField(b, key)
	}
	if !bytes.Equal(admitWith([]byte{byte(Voter)}, testKey(2)), admit) {
		t.Fatal("test builder differs from the encoder")
	}
	longID := wire.AppendField([]byte{CommandVersion, byte(KindForget)}, bytes.Repeat([]byte("a"), MaxIDLen+1))
	cases := []struct {
		name, phrase string
		b            []byte
	}{
		{"empty", "command of 0 bytes", nil},
		{"version only", "command of 1 bytes", []byte{CommandVersion}},
		{"wrong version", "command version 2", append([]byte{2}, admit[1:]...)},
		{"unknown kind", "unknown command kind 99", []byte{CommandVersion, 99}},
		{"truncated", "admit", admit[:len(admit)-1]},
		{"trailing byte", "admit", append(bytes.Clone(admit), 0)},
		{"missing fields", "admit", []byte{CommandVersion, byte(KindAdmit), 0, 0, 0, 0}},
		{"short key", "admit", admitWith([]byte{byte(Voter)}, testKey(2)[:31])},
		{"seat two bytes wide", "u8 field of 2 bytes", admitWith([]byte{1, 1}, testKey(2))},
		{"id over bound", "forget", longID},
		{"oversize command", "exceeds", append([]byte{CommandVersion, byte(KindSet)}, make([]byte, MaxCommandLen)...)},
	}
	for _, tc := range cases {
		if _, err := DecodeCommand(tc.b); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.phrase) {
			t.Errorf("%s: DecodeCommand = %v, want ErrMalformed naming %q", tc.name, err, tc.phrase)
		}
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	for _, s := range []*State{New(), fixture(t), mustApply(t, fixture(t), Set{Name: "fleet-open", Value: "1"}, Set{Name: "lease-lifetime", Value: "45s"})} {
		b := EncodeSnapshot(s)
		got, err := DecodeSnapshot(b)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(s) || !bytes.Equal(EncodeSnapshot(got), b) {
			t.Fatalf("snapshot round trip changed %v into %v", s, got)
		}
		if diff := cmp.Diff(s.Members(), got.Members()); diff != "" {
			t.Fatal(diff)
		}
		if got.Settings() != s.Settings() || got.Voters() != s.Voters() || !cmp.Equal(got.Revocations(), s.Revocations()) {
			t.Fatal("settings, voters or revocations differ after restore")
		}
	}
}

// TestDecodeSnapshotRefuses pins the invariants a restored snapshot must
// keep, each broken by editing a valid encoding.
func TestDecodeSnapshotRefuses(t *testing.T) {
	good := EncodeSnapshot(fixture(t))
	f, err := wire.SplitFields(nil, good[1:], snapshotFields)
	if err != nil {
		t.Fatal(err)
	}
	rebuild := func(clusterID, members, revoked, settings []byte) []byte {
		b := []byte{SnapshotVersion}
		for _, x := range [][]byte{clusterID, members, revoked, settings} {
			b = wire.AppendField(b, x)
		}
		return b
	}
	if !bytes.Equal(rebuild(f[0], f[1], f[2], settingsList("fleet-open", "0", "lease-lifetime", "10min")), good) {
		t.Fatal("test rebuild differs from the encoder")
	}
	revocation := func(id string, key []byte) []byte {
		rec, mark := wire.BeginField(nil)
		return wire.EndField(wire.AppendField(wire.AppendStringField(rec, id), key), mark)
	}
	revokedN1 := append(bytes.Clone(f[2]), revocation("old-n1", testKey(1))...) // n1's key both live and revoked
	revokedTwice := append(bytes.Clone(f[2]), revocation("again", testKey(9))...)
	revokedShortKey := revocation("x", testKey(8)[:31])
	solo := EncodeSnapshot(mustApply(t, New(), Found{ClusterID: testCluster, ID: "n1", Key: testKey(1)}))
	sf, _ := wire.SplitFields(nil, solo[1:], snapshotFields)
	learnerOnly := bytes.Replace(sf[1], []byte{0, 0, 0, 1, byte(Voter)}, []byte{0, 0, 0, 1, byte(Learner)}, 1)
	cases := []struct {
		name, phrase string
		b            []byte
	}{
		{"empty", "version", nil},
		{"wrong version", "version", append([]byte{9}, good[1:]...)},
		{"trailing byte", "after the 4 fields", append(bytes.Clone(good), 0)},
		{"bad cluster id", "cluster id", rebuild([]byte("xyz"), f[1], f[2], f[3])},
		{"revocation list torn", "revocation list", rebuild(f[0], f[1], f[2][:len(f[2])-1], f[3])},
		{"revoked key short", "field of 31 bytes", rebuild(f[0], f[1], revokedShortKey, f[3])},
		{"key revoked twice", "revoked twice", rebuild(f[0], f[1], revokedTwice, f[3])},
		{"live key revoked", "held by another member or revoked", rebuild(f[0], f[1], revokedN1, f[3])},
		{"members unsorted", "strictly ascending by id", rebuild(f[0], swapFirstTwo(t, f[1]), f[2], f[3])},
		{"no settings", "settings", rebuild(f[0], f[1], f[2], nil)},
		{"setting not canonical", "not canonical", rebuild(f[0], f[1], f[2], settingsList("fleet-open", "0", "lease-lifetime", "600s"))},
		{"founded, no voter", "needs a voter", rebuild(sf[0], learnerOnly, sf[2], sf[3])},
		{"members, no cluster", "unfounded one holds nothing", rebuild(nil, f[1], f[2], f[3])},
	}
	for _, tc := range cases {
		if _, err := DecodeSnapshot(tc.b); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.phrase) {
			t.Errorf("%s: DecodeSnapshot = %v, want ErrMalformed naming %q", tc.name, err, tc.phrase)
		}
	}
}

func settingsList(pairs ...string) []byte {
	var b []byte
	for _, p := range pairs {
		b = wire.AppendStringField(b, p)
	}
	return b
}

func swapFirstTwo(t *testing.T, list []byte) []byte {
	t.Helper()
	n, _ := wire.CountFields(list)
	recs, err := wire.SplitFields(nil, list, n)
	if err != nil || n < 2 {
		t.Fatalf("member list: %d records, %v", n, err)
	}
	recs[0], recs[1] = recs[1], recs[0]
	var out []byte
	for _, r := range recs {
		out = wire.AppendField(out, r)
	}
	return out
}
