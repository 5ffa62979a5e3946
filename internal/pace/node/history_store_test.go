package node

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/history"
	"github.com/buildfleet/buildfleet/internal/pace/machineticket"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// TestAGrantShowsUpInTheCurrentMinutesDispatchedPoint starts a real node (a fleet of one whose
// worker registers with its own scheduler), asks it for two leases over loopback — one it
// grants, one for a toolchain nobody serves — and finds both counted in the open minute of the
// fleet's charts, with the hour before this node led null.
func TestAGrantShowsUpInTheCurrentMinutesDispatchedPoint(t *testing.T) {
	t.Setenv("PACE_NODE_SHARED_CPU", "1") // a busy test host must not withdraw the worker
	n := startFleetOfOne(t)
	waitRegisteredAt(t, n, n.endpoint())
	fp := n.sched.Snapshot().Workers[0].Fingerprint
	if s := time.Now().Second(); s >= 58 { // both leases and the view in one minute
		time.Sleep(time.Duration(61-s) * time.Second)
	}
	if _, err := leaseOver(t, n, fp, "ab"); err != nil {
		t.Fatalf("the node's own worker was not granted: %v", err)
	}
	if _, err := leaseOver(t, n, "no-such-toolchain", "cd"); !isRefusal(err, wire.CodeNoWorker) {
		t.Fatalf("an unserved toolchain: %v; want no-worker", err)
	}
	v, err := n.fleetSeries("1h", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{"dispatched": 1, "local_fallbacks": 1, "fallback_no_worker": 1} {
		p := pointsOf(t, v, name)
		if last := p[len(p)-1]; last == nil || *last != want {
			t.Errorf("%s in the current minute: %v; want %v", name, show(last), want)
		}
		if p[0] != nil {
			t.Errorf("%s an hour ago, before this node led: %v; want null", name, *p[0])
		}
	}
}

// leaseOver sends a LEASE for fp to n over loopback (admitted as this machine), its key the
// byte pair repeated.
func leaseOver(t *testing.T, n *Node, fp, pair string) ([]byte, error) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", n.Addr().String(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	req := verbs.LeaseRequest{Fingerprint: fp, Key: strings.Repeat(pair, 32), Codecs: wire.NewCodecList(wire.CodecZstd)}
	if _, err := nc.Write(machineticket.Request(wire.OpLease, req.Append(nil))); err != nil {
		t.Fatal(err)
	}
	_, body, err := wire.ReadReply(bufio.NewReader(nc), wire.OpLease, wire.MaxReportReply, nil)
	return body, err
}

func isRefusal(err error, code wire.Code) bool {
	r, ok := err.(wire.Refusal)
	return ok && r.Code == code
}

func pointsOf(t *testing.T, v history.View, name string) []*float64 {
	t.Helper()
	for _, s := range v.Series {
		if s.Name == name {
			return s.Points
		}
	}
	t.Fatalf("no series %s", name)
	return nil
}

func show(p *float64) any {
	if p == nil {
		return "null"
	}
	return *p
}

// storeNode is a node with just enough to keep history in dir, logging into logs.
func storeNode(dir string, logs *bytes.Buffer) *Node {
	return &Node{plan: Plan{StateDir: dir}, log: slog.New(slog.NewTextHandler(logs, nil))}
}

func someHistory(n *Node) {
	t0 := history.BucketStart(time.Now().UnixMilli()) - 10*history.Width
	for m := range int64(3) {
		var v history.Values
		v[history.CacheHits], v[history.OfferableSlots] = uint64(5*m), 2
		n.fleetHistory.Add("peer", []history.Bucket{{StartMs: uint64(t0 + m*history.Width), Values: v}})
	}
}

func TestTheHistoryIsWrittenAtStopAndReadAtStart(t *testing.T) {
	dir := t.TempDir()
	n := startNodeIn(t, dir)
	someHistory(n)
	n.Stop(context.Background())
	if _, err := os.Stat(filepath.Join(dir, HistoryFile)); err != nil {
		t.Fatalf("no history file after stop: %v", err)
	}
	again := startNodeIn(t, dir)
	v, err := again.machineSeries("peer", "1h", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	p := pointsOf(t, v, "hits")
	if got := p[len(p)-9]; got == nil || *got != 5 {
		t.Fatalf("the peer's hits read back: %v; want 5", show(got))
	}
}

func startNodeIn(t *testing.T, dir string) *Node {
	t.Helper()
	env := Env{RoutedFrom: func() (string, error) { return "127.0.0.1", nil },
		DefaultStateDir: func() (string, string, error) { return dir, "test", nil }}
	cfg, err := Load([]string{"--cluster-dir=" + dir, "--listen-node=127.0.0.1:0", "--listen-raft=127.0.0.1:0",
		"--slots=0", "--cache-memory=1MiB"}, 8<<30)
	if err != nil {
		t.Fatal(err)
	}
	n, err := Start(context.Background(), cfg, env, slog.New(slog.NewTextHandler(io.Discard, nil)), new(slog.LevelVar))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Stop(context.Background()) })
	return n
}

func TestAnUnreadableHistoryFileStartsEmptyWithOneLineAndIsReplaced(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, HistoryFile)
	os.WriteFile(path, []byte("PACEHIST\x01 cut short"), 0o600)
	var logs bytes.Buffer
	n := storeNode(dir, &logs)
	n.loadHistory()
	if lines := strings.Count(logs.String(), "\n"); lines != 1 || !strings.Contains(logs.String(), "unreadable") {
		t.Fatalf("%d log lines: %s", lines, logs.String())
	}
	if ids := n.fleetHistory.Machines(); len(ids) != 0 {
		t.Fatalf("started with %v", ids)
	}
	someHistory(n)
	n.saveHistory()
	var back history.Fleet
	data, _ := os.ReadFile(path)
	if err := back.UnmarshalBinary(data); err != nil || len(back.Machines()) != 1 {
		t.Fatalf("the file was not replaced by a readable one: %v", err)
	}
}

func TestANewerBuildsHistoryFileIsKeptAndHistoryStaysInMemory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, HistoryFile)
	newer := []byte("PACEHIST\x02 a layout this build does not know") // version 2
	os.WriteFile(path, newer, 0o600)
	var logs bytes.Buffer
	n := storeNode(dir, &logs)
	n.loadHistory()
	someHistory(n)
	n.saveHistory()
	n.fleetHistory.Decided(history.Dispatched, time.Now())
	n.saveHistory()
	if got, _ := os.ReadFile(path); !bytes.Equal(got, newer) {
		t.Fatal("the newer build's file was overwritten")
	}
	if lines := strings.Count(logs.String(), "\n"); lines != 1 || !strings.Contains(logs.String(), "newer build") {
		t.Fatalf("%d log lines: %s", lines, logs.String())
	}
	if _, err := n.machineSeries("peer", "1h", time.Now()); err != nil {
		t.Fatalf("the history kept in memory: %v", err)
	}
}

func TestTheHistoryIsSavedOnlyWhenItChangedAndAtomically(t *testing.T) {
	dir := t.TempDir()
	var logs bytes.Buffer
	n := storeNode(dir, &logs)
	n.loadHistory() // no file: empty, silent
	n.saveHistory() // nothing recorded: nothing written
	if _, err := os.Stat(filepath.Join(dir, HistoryFile)); !os.IsNotExist(err) || logs.Len() != 0 {
		t.Fatalf("an empty history was written (%v) or logged: %s", err, logs.String())
	}
	someHistory(n)
	n.saveHistory()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != HistoryFile {
		t.Fatalf("the state directory holds %v; want the history file alone (no temporary left)", entries)
	}
}
