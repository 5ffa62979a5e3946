package verbs

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

func TestParseFleetSummaryReadsTheNestedField(t *testing.T) {
	s := FleetSummary{ClusterID: "c1", State: FleetPending, CreatedAt: 42, NodeID: "n2",
		RaftEndpoint: "10.0.0.2:6680", Members: []string{"n1"}, MemberTotal: 1, NodeEndpoint: "10.0.0.2:6674"}
	fields, err := wire.SplitFields(nil, s.AppendField(nil), 1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseFleetSummary(fields[0])
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Errorf("parsed %+v\nwant   %+v", got, s)
	}
	long := s
	long.NodeID = strings.Repeat("n", MaxID+1)
	fields, _ = wire.SplitFields(nil, long.AppendField(nil), 1)
	if got, err := ParseFleetSummary(fields[0]); !errors.Is(err, ErrTooLong) || got.ClusterID != "" {
		t.Errorf("a node id over its bound: %+v, %v", got, err)
	}
	if _, err := ParseFleetSummary(nil); !errors.Is(err, ErrMalformed) {
		t.Errorf("an empty field: %v", err)
	}
}
