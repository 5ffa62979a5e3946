package node

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
)

func TestNodePortLimitsFlagsAndBudget(t *testing.T) {
	c, err := Load(nil, 16<<30)
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxConns != 1024 || c.MaxConnsPerAddr != 256 || c.MaxInflight != 0 {
		t.Fatalf("defaults: %d connections, %d per address, budget %d", c.MaxConns, c.MaxConnsPerAddr, c.MaxInflight)
	}
	c, err = Load([]string{"--max-connections=64", "--max-connections-per-address=8", "--max-inflight=1GiB"}, 16<<30)
	if err != nil || c.MaxConns != 64 || c.MaxConnsPerAddr != 8 || c.MaxInflight != 1<<30 {
		t.Fatalf("flags: %+v %v", c, err)
	}
	tests := []struct {
		flag, compile uint64
		want          int64
	}{
		{0, 0, frameserver.DefaultPayloadBudget},         // no worker
		{0, 128 << 20, frameserver.DefaultPayloadBudget}, // a small worker
		{0, 4 << 30, 4<<30 + 256<<20},                    // the whole compile budget and one value
		{1 << 30, 4 << 30, 1 << 30},                      // --max-inflight wins
	}
	for _, tt := range tests {
		n := &Node{plan: Plan{Cfg: Config{MaxInflight: tt.flag}}, compileBudget: tt.compile}
		if got := n.payloadBudget(); got != tt.want {
			t.Errorf("flag %d, compile budget %d: %d, want %d", tt.flag, tt.compile, got, tt.want)
		}
	}
}
