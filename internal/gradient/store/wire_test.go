package store

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// TestEnumsMirrorTheWire: the server maps JobFailed.kind and EvalMessage.level by number.
func TestEnumsMirrorTheWire(t *testing.T) {
	for k := FailTransient; k <= FailCanceled; k++ {
		if got := wire.BuildFailureKind(k).String(); got != k.String() {
			t.Errorf("FailureKind %d is %s, wire says %s", k, k, got)
		}
	}
	for l := LevelError; l <= LevelNotice; l++ {
		if got := wire.EvalMessageLevel(l).String(); got != l.String() {
			t.Errorf("MessageLevel %d is %s, wire says %s", l, l, got)
		}
	}
}
