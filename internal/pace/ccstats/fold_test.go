package ccstats

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func foldText(t *testing.T, log string) Summary {
	t.Helper()
	s, err := Fold(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFoldGroupsDispatchByCause: records naming causes, and old records naming addresses,
// fold into one row per cause whatever machine each names.
func TestFoldGroupsDispatchByCause(t *testing.T) {
	log := `{"outcome":"miss","ms":100,"dispatch":"dispatched","worker":"10.0.0.7:6674"}
{"outcome":"miss","ms":100,"dispatch":"dispatched","worker":"10.0.0.8:6674"}
{"outcome":"miss","ms":120,"dispatch":"worker 10.0.0.7:6674: refused not-a-member: this caller is not admitted"}
{"outcome":"miss","ms":120,"dispatch":"worker 10.0.0.8:6674: refused not-a-member: this caller is not admitted"}
{"outcome":"miss","ms":120,"dispatch":"worker-refused:not-a-member"}
{"outcome":"miss","ms":90,"dispatch":"scheduler 10.0.0.5:6674 refused: no-capacity"}
{"outcome":"failed","ms":90,"dispatch":"worker 10.0.0.9:6674: the compiler exited 1"}
{"outcome":"unavailable","ms":90,"dispatch":"not-dispatched:no-scheduler"}
{"outcome":"miss","ms":90,"dispatch":"what a newer build might say 10.9.9.9"}
{"outcome":"hit","via":"direct","ms":3}
`
	s := foldText(t, log)
	want := map[Cause]int{CauseDispatched: 2, "worker-refused:not-a-member": 3, "refused:no-capacity": 1,
		CauseRemoteFailed: 1, CauseNoScheduler: 1, CauseOther: 1}
	if fmt.Sprint(s.Dispatch) != fmt.Sprint(want) {
		t.Fatalf("dispatch %v, want %v", s.Dispatch, want)
	}
	if s.Invocations != 10 || s.Misses != 7 || s.CompileFailed != 1 || s.Unavailable != 1 || s.Hits != 1 {
		t.Fatalf("outcomes %+v", s)
	}
}

// TestFoldLatencies: hit and miss totals count every such invocation; the phases count only
// the invocations that spent time in them.
func TestFoldLatencies(t *testing.T) {
	log := `{"outcome":"hit","via":"direct","ms":2,"lookup_ms":1,"io_ms":1}
{"outcome":"hit","via":"preprocessed","ms":8,"cpp_ms":5,"lookup_ms":2,"io_ms":2}
{"outcome":"miss","ms":100,"cpp_ms":7,"lookup_ms":1,"store_ms":3,"io_ms":4}
{"outcome":"miss","ms":200,"cpp_ms":9,"io_ms":6}
{"outcome":"passthrough","ms":50,"reason":"link"}
`
	s := foldText(t, log)
	for _, tc := range []struct {
		name       string
		l          *Latency
		count      uint64
		mean, maxv float64
	}{
		{"hit", &s.HitMS, 2, 5, 8},
		{"miss", &s.MissMS, 2, 150, 200},
		{"preprocess", &s.PreprocessMS, 3, 7, 9},
		{"lookup", &s.LookupMS, 3, 4.0 / 3, 2},
		{"store", &s.StoreMS, 1, 3, 3},
		{"cache I/O (old lines carry only this)", &s.CacheMS, 4, 13.0 / 4, 6},
	} {
		if tc.l.Count != tc.count || tc.l.Mean() != tc.mean || tc.l.Max() != tc.maxv {
			t.Errorf("%s: count %d mean %v max %v, want %d %v %v", tc.name, tc.l.Count, tc.l.Mean(), tc.l.Max(), tc.count, tc.mean, tc.maxv)
		}
	}
}

func TestFoldReasonsAreBounded(t *testing.T) {
	var b strings.Builder
	for i := 0; i < MaxReasons+40; i++ {
		fmt.Fprintf(&b, `{"outcome":"fallback","ms":1,"reason":"compiler identity: /opt/gcc-%d/bin/gcc: exec format error"}`+"\n", i)
		fmt.Fprintf(&b, `{"outcome":"uncacheable","ms":1,"reason":"reason number %d"}`+"\n", i)
	}
	s := foldText(t, b.String())
	if s.Reasons["fallback: compiler identity"] != MaxReasons+40 {
		t.Errorf("error detail not cut from the reason: %d", s.Reasons["fallback: compiler identity"])
	}
	if len(s.Reasons) != MaxReasons+1 || s.Reasons[OtherReasons] != 41 {
		t.Errorf("%d reasons, %d gathered as other", len(s.Reasons), s.Reasons[OtherReasons])
	}
	long := strings.Repeat("é", 100)
	if k := reasonKey(long); len(k) > maxReasonBytes || !strings.HasPrefix(long, k) || k == "" {
		t.Errorf("reasonKey cut %q", k)
	}
}

// TestFoldSurvivesDamage: a torn line, an overlong line, blank lines and a last line without
// its newline; none stops the fold, and the overlong one is never held whole.
func TestFoldSurvivesDamage(t *testing.T) {
	huge := `{"outcome":"miss","tu":"` + strings.Repeat("x", 3*MaxLineBytes) + `"}`
	log := `{"outcome":"hit","ms":1}` + "\n" +
		`{"outcome":"mi` + "\n" +
		"\n  \n" +
		huge + "\n" +
		`{"outcome":"miss","ms":5,"dispatch":"dispatched"}` + "\n" +
		`{"outcome":"banana","ms":5}` + "\n" +
		`{"outcome":"hit","ms":2}`
	s := foldText(t, log)
	if s.Invocations != 4 || s.Hits != 2 || s.Misses != 1 || s.OtherOutcomes != 1 || s.Unreadable != 2 {
		t.Fatalf("summary %+v", s)
	}
	if _, err := ParseLine([]byte(huge)); err != ErrLineTooLong {
		t.Fatalf("overlong line: %v", err)
	}
}

// TestRecordRoundTrip: a record pace-cc writes parses back as written.
func TestRecordRoundTrip(t *testing.T) {
	r := Record{Time: 1, Outcome: Miss, TotalMS: 10, CppMS: 1, LookupMS: 2, StoreMS: 3, CacheMS: 5,
		Dispatch: WorkerRefused(0x1B), Worker: ""}
	line, _ := json.Marshal(r)
	got, err := ParseLine(line)
	if err != nil || got != r {
		t.Fatalf("got %+v, %v\nfrom %s", got, err, line)
	}
	if !strings.Contains(string(line), `"dispatch":"worker-refused:lease-expired"`) {
		t.Fatalf("line %s", line)
	}
}
