package wire

import (
	"reflect"
	"testing"
)

// The bulk lane of gradient-protocol §1.5, by variant name; every other variant
// rides control.
var bulkVariants = map[string]bool{
	"UploadChunk": true, "NarRequestResume": true, "LogChunk": true, "JobCompleted": true,
	"NarPush": true, "NarStreamHeader": true, "NarUnavailable": true, "NarAbort": true,
	"EvalCachePullResult": true, "EvalCacheChunk": true,
}

func TestLaneOfEveryVariant(t *testing.T) {
	bulk := 0
	for _, d := range []*enumDef{clientMessageEnum, serverMessageEnum} {
		for _, v := range d.variants {
			m := reflect.New(v.typ).Interface().(Message)
			want := LaneControl
			if bulkVariants[v.name] {
				want = LaneBulk
				bulk++
			}
			if got := Lane(m); got != want {
				t.Errorf("Lane(%s) = %v, want %v", v.name, got, want)
			}
		}
	}
	if bulk != len(bulkVariants) {
		t.Errorf("found %d bulk variants, want %d (a name in bulkVariants is not a variant)", bulk, len(bulkVariants))
	}
}
