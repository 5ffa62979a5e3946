package ccstats

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// genRecord draws a record as pace-cc, an older pace-cc or a damaged log might hold it.
func genRecord() *rapid.Generator[Record] {
	outcomes := []Outcome{Hit, Miss, Uncacheable, Passthrough, Unavailable, Fallback, Failed, "future"}
	reasons := []string{"", "link", "verified", "compiler identity: exec: boom", "preprocessor failed"}
	return rapid.Custom(func(t *rapid.T) Record {
		addr := fmt.Sprintf("10.%d.%d.%d:%d", rapid.IntRange(0, 255).Draw(t, "a"),
			rapid.IntRange(0, 255).Draw(t, "b"), rapid.IntRange(0, 255).Draw(t, "c"), rapid.IntRange(1, 65535).Draw(t, "port"))
		dispatch := rapid.SampledFrom([]string{"", string(CauseDispatched), string(CauseNoScheduler),
			"refused:no-worker", "worker-refused:lease-expired", "scheduler " + addr + " refused: no-capacity",
			"worker " + addr + ": refused not-a-member: no", "worker " + addr + ": the compiler exited 1",
			"no worker address reachable: dialling " + addr + ": refused", "junk " + addr}).Draw(t, "dispatch")
		ms := func(name string) float64 {
			return float64(rapid.IntRange(0, 5_000_000).Draw(t, name)) / 1000
		}
		return Record{
			Outcome: rapid.SampledFrom(outcomes).Draw(t, "outcome"),
			Via:     rapid.SampledFrom([]string{"", "direct", "preprocessed", "listing"}).Draw(t, "via"),
			Reason:  rapid.SampledFrom(reasons).Draw(t, "reason"),
			TotalMS: ms("ms"), CppMS: ms("cpp"), LookupMS: ms("lookup"), StoreMS: ms("store"), CacheMS: ms("io"),
			Dispatch: Cause(dispatch),
		}
	})
}

func logOf(recs []Record) []byte {
	var b bytes.Buffer
	for _, r := range recs {
		line, _ := json.Marshal(r)
		b.Write(append(line, '\n'))
	}
	return b.Bytes()
}

// TestFoldIsOrderIndependentAndAddsUp: any order of the same lines folds to the same summary,
// and its counts add up to the lines folded.
func TestFoldIsOrderIndependentAndAddsUp(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		recs := rapid.SliceOfN(genRecord(), 0, 60).Draw(t, "records")
		perm := rapid.Permutation(recs).Draw(t, "order")
		a, err := Fold(bytes.NewReader(logOf(recs)))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Fold(bytes.NewReader(logOf(perm)))
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("order changed the fold:\n%+v\n%+v", a, b)
		}
		checkAddsUp(t, a, recs)
	})
}

func checkAddsUp(t *rapid.T, s Summary, recs []Record) {
	outcomes := s.Hits + s.Misses + s.Uncacheable + s.Passthrough + s.Unavailable + s.Fallbacks + s.CompileFailed + s.OtherOutcomes
	if s.Invocations != len(recs) || outcomes != s.Invocations || s.HitsDirect+s.HitsPrepro+s.HitsListing != s.Hits {
		t.Fatalf("outcomes do not add up: %+v", s)
	}
	withCause, causes := 0, 0
	for _, r := range recs {
		if r.Dispatch != "" {
			withCause++
		}
	}
	for c, n := range s.Dispatch {
		if !c.Known() {
			t.Fatalf("cause %q outside the vocabulary", c)
		}
		causes += n
	}
	if causes != withCause {
		t.Fatalf("%d dispatch outcomes counted, %d recorded", causes, withCause)
	}
	if s.HitMS.Count != uint64(s.Hits) || s.MissMS.Count != uint64(s.Misses) {
		t.Fatalf("latency counts %d %d for %d hits %d misses", s.HitMS.Count, s.MissMS.Count, s.Hits, s.Misses)
	}
}
