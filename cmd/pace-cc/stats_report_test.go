package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/ccstats"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// refusingScheduler answers every request on a loopback port with one refusal, as a scheduler
// with no matching worker does.
func refusingScheduler(t *testing.T, code wire.Code) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			br := bufio.NewReader(nc)
			var hdr [wire.RequestHeaderLen]byte
			if h, err := wire.ReadRequestHeader(br, &hdr); err == nil && wire.Drain(br, uint64(h.PayloadLen)) == nil {
				nc.Write(wire.AppendRefusalReply(nil, wire.Refuse(code, "")))
			}
			nc.Close()
		}
	}()
	return ln.Addr().String()
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

var (
	latencyLine = regexp.MustCompile(`(?m)^(.+) latency +count (\d+)  mean ([\d.]+) ms  p50 ([\d.]+) ms  p95 ([\d.]+) ms  max ([\d.]+) ms$`)
	causeLine   = regexp.MustCompile(`(?m)^  ([a-z:-]+) +(\d+) \( *([\d.]+%)\)\n      check: (.+)$`)
)

// TestStatsReportGroupsCausesAndTimes builds with real gcc through the real binary against
// two unreachable schedulers, two refusing ones and none, with an old log line naming a
// worker's address: --show-stats groups the misses by cause whatever address each met, prints
// the latencies, and --html-stats writes a page holding the same figures.
func TestStatsReportGroupsCausesAndTimes(t *testing.T) {
	e, dir := newEnv(t), t.TempDir()
	schedulers := []string{"", closedPort(t), closedPort(t),
		refusingScheduler(t, wire.CodeNoWorker), refusingScheduler(t, wire.CodeNoWorker)}
	for i, sched := range schedulers {
		src := fmt.Sprintf("tu%d.c", i)
		write(t, dir, map[string]string{src: fmt.Sprintf("int f%d(int x) { return x * %d; }\n", i, i+2)})
		e.extra = []string{"PACE_SCHEDULER=" + sched}
		if r := e.paceCC(dir, "gcc", "-O2", "-c", src, "-o", src+".o"); r.status != 0 || e.lastOutcome() != "miss" {
			t.Fatalf("compile %d: status %d, outcome %s\n%s", i, r.status, e.lastOutcome(), r.stderr)
		}
	}
	e.extra = nil
	if r := e.paceCC(dir, "gcc", "-O2", "-c", "tu0.c", "-o", "tu0.c.o"); r.status != 0 || !strings.HasPrefix(e.lastOutcome(), "hit") {
		t.Fatalf("rebuild: %d %s", r.status, e.lastOutcome())
	}
	appendOldLine(t, e, `{"outcome":"miss","ms":50,"dispatch":"worker 10.9.8.7:6674: refused not-a-member: this caller is not admitted to this surface"}`)

	r := e.paceCC(dir, "--show-stats")
	if r.status != 0 {
		t.Fatalf("--show-stats: %d %s", r.status, r.stderr)
	}
	causes := checkCauses(t, r.stdout)
	latencies := checkLatencies(t, r.stdout)

	if r := e.paceCC(dir, "--html-stats", "report.html"); r.status != 0 {
		t.Fatalf("--html-stats: %d %s", r.status, r.stderr)
	}
	page := string(read(t, filepath.Join(dir, "report.html")))
	for _, m := range causes {
		if want := fmt.Sprintf(`<code>%s</code></td><td class="n">%s</td><td class="n">%s</td>`, m[1], m[2], m[3]); !strings.Contains(page, want) {
			t.Errorf("page lacks the row %s", want)
		}
	}
	for _, m := range latencies {
		want := fmt.Sprintf(`<tr><td>%s</td><td class="n">%s</td><td class="n">%s</td><td class="n">%s</td><td class="n">%s</td><td class="n">%s</td></tr>`,
			m[1], m[2], m[3], m[4], m[5], m[6])
		if !strings.Contains(page, want) {
			t.Errorf("page lacks the row %s", want)
		}
	}
	if strings.Contains(page, "src=") || strings.Contains(page, "href=") {
		t.Error("the page fetches something")
	}
}

func appendOldLine(t *testing.T, e *env, line string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(e.home, ".local", "state", "pace-cc", ccstats.LogName), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}

// checkCauses finds one row per cause with the right count, and no address anywhere.
func checkCauses(t *testing.T, report string) [][]string {
	t.Helper()
	rows := causeLine.FindAllStringSubmatch(report, -1)
	got := map[string]string{}
	for _, m := range rows {
		got[m[1]] = m[2]
	}
	want := map[string]string{"not-dispatched:no-scheduler": "1", "scheduler-unreachable": "2",
		"refused:no-worker": "2", "worker-refused:not-a-member": "1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("causes %v, want %v:\n%s", got, want, report)
	}
	if strings.Contains(report, "127.0.0.1") || strings.Contains(report, "10.9.8.7") {
		t.Fatalf("the report names a machine:\n%s", report)
	}
	return rows
}

// checkLatencies finds every phase a build went through, each counted as often as it ran.
func checkLatencies(t *testing.T, report string) [][]string {
	t.Helper()
	rows := latencyLine.FindAllStringSubmatch(report, -1)
	got := map[string]string{}
	for _, m := range rows {
		got[m[1]] = m[2]
	}
	// Six misses (one an old line) and one direct hit, which ran no preprocessor, nor did the
	// miss without a scheduler (depend mode, pace-wire §3.6.1): each phase is counted once per
	// invocation that spent time in it.
	for name, count := range map[string]string{"hit": "1", "miss": "6", "preprocess": "4", "cache lookup": "6", "cache store": "5", "cache I/O": "6"} {
		if got[name] != count {
			t.Errorf("%s latency counted %q, want %s", name, got[name], count)
		}
	}
	if t.Failed() {
		t.Fatalf("report:\n%s", report)
	}
	return rows
}

func TestHTMLStatsArguments(t *testing.T) {
	e, dir := newEnv(t), t.TempDir()
	for _, tc := range []struct {
		args   []string
		status int
	}{
		{[]string{"--html-stats"}, 2},
		{[]string{"--html-stats="}, 2},
		{[]string{"--html-stats=a.html", "b.html"}, 2},
		{[]string{"--html-stats", "a.html", "b.html"}, 2},
		{[]string{"--html-stats", filepath.Join(dir, "missing", "a.html")}, 1},
		{[]string{"--html-stats=" + filepath.Join(dir, "abs.html")}, 0},
		{[]string{"--html-stats", "rel.html"}, 0},
	} {
		if r := e.paceCC(dir, tc.args...); r.status != tc.status {
			t.Errorf("%v: status %d, want %d (%s)", tc.args, r.status, tc.status, r.stderr)
		}
	}
	for _, name := range []string{"abs.html", "rel.html"} {
		if page := string(read(t, filepath.Join(dir, name))); !strings.Contains(page, "<td>invocations</td>") {
			t.Errorf("%s: %q", name, page)
		}
	}
}
