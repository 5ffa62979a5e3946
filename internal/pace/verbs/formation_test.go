package verbs

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

func TestFleetSummaryRoundTrips(t *testing.T) {
	s := FleetSummary{ClusterID: "c1", State: FleetEstablished, CreatedAt: 1700000000, LeaderID: "n1",
		LeaderNodeEndpoint: "10.0.0.1:6674", NodeID: "n2", RaftEndpoint: "10.0.0.2:6680", Members: []string{"n1", "n2"},
		MemberTotal: 3, NodeEndpoint: "10.0.0.2:6674", LeaderKey: bytes.Repeat([]byte{7}, 32)}
	raw := s.AppendField(nil)
	payload := wire.AppendField(wire.AppendField(raw, bytes.Repeat([]byte{1}, 32)), bytes.Repeat([]byte{2}, 64))
	ok, err := ParseFleetSummaryOk(payload)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ok.Summary, s) {
		t.Errorf("parsed %+v\nwant   %+v", ok.Summary, s)
	}
	fields, _ := wire.SplitFields(nil, raw, 1)
	if !bytes.Equal(ok.SummaryRaw, fields[0]) {
		t.Error("SummaryRaw is not the nested field's bytes")
	}
}

func TestFleetSummaryRefusesWhatIsNotOne(t *testing.T) {
	good := FleetSummary{ClusterID: "c1", State: FleetSolitary, NodeID: "n1", MemberTotal: 1, Members: []string{"n1"}}
	key, sig := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 64)
	for name, s := range map[string]FleetSummary{
		"no cluster id":          {State: FleetSolitary, NodeID: "n1"},
		"unknown state":          {ClusterID: "c1", State: 9, NodeID: "n1"},
		"total below the list":   {ClusterID: "c1", State: FleetSolitary, NodeID: "n1", Members: []string{"a", "b"}, MemberTotal: 1},
		"eleven members":         {ClusterID: "c1", State: FleetSolitary, NodeID: "n1", Members: strings.Split("a b c d e f g h i j k", " "), MemberTotal: 11},
		"leader key of 31 bytes": {ClusterID: "c1", State: FleetSolitary, NodeID: "n1", LeaderKey: make([]byte, 31)},
	} {
		payload := wire.AppendField(wire.AppendField(s.AppendField(nil), key), sig)
		if _, err := ParseFleetSummaryOk(payload); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	payload := wire.AppendField(wire.AppendField(good.AppendField(nil), key), sig)
	if _, err := ParseFleetSummaryOk(payload); err != nil {
		t.Errorf("the good one: %v", err)
	}
}
