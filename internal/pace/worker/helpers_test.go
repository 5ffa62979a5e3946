package worker

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/clocktest"
	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/lease"
	"github.com/buildfleet/buildfleet/internal/pace/lease/leasetest"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// waitLimit bounds every wait in tests so a bug hangs nothing; it is a
// safety net, never the thing asserted.
const waitLimit = 20 * time.Second

const (
	testCluster  = "cluster-1"
	testEndpoint = "127.0.0.1:6674"
	testLeader   = "leader-1"
)

// fakeFP is the fingerprint tests pin their compilers under.
var fakeFP = strings.Repeat("ab", 32)

func newClock() *clocktest.Clock { return clocktest.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)) }

// leaseState is the fleet state a worker verifies against.
type leaseState struct {
	roster *leasetest.Roster
	heard  atomic.Int64 // unix nanos; 0 = never
	empty  atomic.Bool  // report a roster without voters
}

func (s *leaseState) Roster() lease.Roster {
	if s.empty.Load() {
		return leasetest.NewRoster(testCluster)
	}
	return s.roster
}

func (s *leaseState) LeaderHeardAt() time.Time {
	if n := s.heard.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// fixture is a worker with a roster, a leader's signer, a node key and a
// clock, plus helpers to build requests.
type fixture struct {
	t      testing.TB
	w      *Worker
	clock  *clocktest.Clock
	leader *leasetest.Signer
	node   *leasetest.Signer
	state  *leaseState
	serial atomic.Uint64
}

type option func(*Config)

func withSlots(n int) option           { return func(c *Config) { c.Slots = n } }
func withBudget(b uint64) option       { return func(c *Config) { c.Budget = b } }
func withoutLeaseChecks() option       { return func(c *Config) { c.VerifyLeases = false } }
func withPins(pins ...Pin) option      { return func(c *Config) { c.Toolchains = SurveyConfig{Pins: pins} } }
func withSurvey(s SurveyConfig) option { return func(c *Config) { c.Toolchains = s } }
func withProgress(d time.Duration) option {
	return func(c *Config) { c.ProgressInterval = d }
}

// newFixture builds a started worker whose first survey has ended, unless
// the survey blocks (see TestSurveyInFlight).
func newFixture(t testing.TB, opts ...option) *fixture {
	t.Helper()
	f := &fixture{t: t, clock: newClock(), leader: leasetest.NewSigner("leader"), node: leasetest.NewSigner("node")}
	f.state = &leaseState{roster: leasetest.NewRoster(testCluster).AddVoter(testLeader, f.leader.Public())}
	f.state.heard.Store(f.clock.Now().UnixNano())
	cfg := Config{
		Slots: 4, Budget: 64 << 20, VerifyLeases: true, Leases: f.state,
		Endpoint: func() string { return testEndpoint }, Signer: f.node,
		ScratchParent: t.TempDir(), Now: f.clock.Now, Logger: quietLogger(),
		Toolchains: SurveyConfig{Pins: []Pin{{Fingerprint: fakeFP, Compiler: realGCC(t)}}},
	}
	for _, o := range opts {
		o(&cfg)
	}
	w, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	f.w = w
	return f
}

// start runs the first survey and waits for it.
func (f *fixture) start() *fixture {
	f.t.Helper()
	f.w.Start(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if _, err := f.w.WaitSurvey(ctx); err != nil {
		f.t.Fatalf("survey: %v", err)
	}
	return f
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func realGCC(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("gcc")
	if err != nil {
		t.Fatalf("these tests compile with a real gcc: %v", err)
	}
	return path
}

// token issues a lease for fp at endpoint, signed by signer as the leader.
func (f *fixture) token(fp, endpoint string, expires time.Time, signer lease.Signer) string {
	f.t.Helper()
	tok, err := lease.Issue(lease.Claims{
		Serial: f.serial.Add(1), Endpoint: endpoint, Fingerprint: fp, Key: strings.Repeat("c", 32),
		ExpiresAt: expires, ClusterID: testCluster, Epoch: 1, SignerID: testLeader,
	}, signer)
	if err != nil {
		f.t.Fatal(err)
	}
	return tok
}

// goodToken is a fresh valid lease for the fake fingerprint.
func (f *fixture) goodToken() string {
	return f.token(fakeFP, testEndpoint, f.clock.Now().Add(10*time.Minute), f.leader)
}

// request is a COMPILE of source with args, identity-enveloped.
func (f *fixture) request(source string, args ...string) verbs.CompileRequest {
	return verbs.CompileRequest{
		LeaseToken: f.goodToken(), Fingerprint: fakeFP, Args: args,
		Source: seal(f.t, wire.CodecIdentity, []byte(source)), Codecs: wire.NewCodecList(wire.CodecZstd),
		SourceName: "src/a.c",
	}
}

func seal(t testing.TB, c wire.Codec, raw []byte) []byte {
	t.Helper()
	env, err := wire.Seal(nil, c, raw)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// outcome is one COMPILE answered in process.
type outcome struct {
	status  wire.Status
	refusal wire.Refusal
	reply   verbs.CompileReply
	payload []byte
}

// compile sends req through Compile (no socket) and releases the reply.
func (f *fixture) compile(req verbs.CompileRequest) outcome {
	f.t.Helper()
	return f.compileFields(req.Append(nil))
}

func (f *fixture) compileFields(payload []byte) outcome {
	f.t.Helper()
	fields, err := wire.SplitFields(nil, payload, verbs.CompileArity)
	if err != nil {
		f.t.Fatalf("split: %v", err)
	}
	r := f.w.Compile(context.Background(), nil, uint32(len(payload)), fields)
	defer r.Release()
	return decodeReply(f.t, r.Status, r.Payload)
}

func decodeReply(t testing.TB, status wire.Status, payload []byte) outcome {
	t.Helper()
	o := outcome{status: status, payload: append([]byte(nil), payload...)}
	switch status {
	case wire.StatusError:
		r, err := wire.ParseErrorPayload(o.payload)
		if err != nil {
			t.Fatal(err)
		}
		o.refusal = r
	case wire.StatusOk:
		r, err := verbs.ParseCompileReply(o.payload)
		if err != nil {
			t.Fatalf("reply does not parse: %v", err)
		}
		o.reply = r
	default:
		t.Fatalf("terminal status %s", status)
	}
	return o
}

// counterValues reads every counter by name.
func counterValues(w *Worker) map[string]uint64 {
	m := map[string]uint64{}
	for _, c := range w.Counters().Metrics() {
		m[c.Name] = c.Value.Load()
	}
	return m
}

// changedCounters lists the counters that moved between two readings.
func changedCounters(before, after map[string]uint64) map[string]uint64 {
	d := map[string]uint64{}
	for name, v := range after {
		if v != before[name] {
			d[name] = v - before[name]
		}
	}
	return d
}

// fakeCompiler writes an executable shell script named name into a fresh
// directory. It records its working directory in cwds, waits while a file
// "hold" exists beside it (so a test decides when it ends), writes "OBJ"
// to the -o argument, prints to both streams and exits 0.
func fakeCompiler(t testing.TB, name string) (path string, dir string) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, name)
	script := `#!/bin/sh
here=$(dirname "$0")
pwd >> "$here/cwds"
echo $$ > "$here/pid.$$"
while [ -e "$here/hold" ]; do sleep 0.01; done
out=""; prev=""
for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
printf 'OBJ' > "$out"
echo "fake stdout"
echo "fake stderr" >&2
exit 0
`
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, dir
}

func hold(t testing.TB, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "hold"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

func unhold(t testing.TB, dir string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, "hold")); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds; the limit is a safety net only.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// server serves the worker on loopback TCP through a frameserver.
func (f *fixture) server() string {
	f.t.Helper()
	srv, err := frameserver.New(frameserver.Config{Handler: f.w, Logger: quietLogger()})
	if err != nil {
		f.t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.t.Fatal(err)
	}
	go srv.Serve(l)
	f.t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

// client is one TCP connection to the worker's port.
type client struct {
	t    testing.TB
	conn net.Conn
}

func dial(t testing.TB, addr string) *client {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{t: t, conn: c}
}

func (c *client) send(payload []byte) {
	c.t.Helper()
	frame := wire.AppendRequestHeader(nil, wire.NewRequestHeader(wire.OpCompile, uint32(len(payload))))
	if _, err := c.conn.Write(append(frame, payload...)); err != nil {
		c.t.Fatal(err)
	}
}

// receive reads replies up to the terminal one, counting Progress frames;
// onProgress runs after each.
func (c *client) receive(onProgress func(n int)) (outcome, int) {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(waitLimit))
	var hdr [wire.ReplyHeaderLen]byte
	progress := 0
	for {
		h, err := wire.ReadReplyHeader(c.conn, &hdr)
		if err != nil {
			c.t.Fatalf("read reply header: %v", err)
		}
		payload := make([]byte, h.PayloadLen)
		if _, err := io.ReadFull(c.conn, payload); err != nil {
			c.t.Fatal(err)
		}
		if h.Status == wire.StatusProgress {
			progress++
			if onProgress != nil {
				onProgress(progress)
			}
			continue
		}
		return decodeReply(c.t, h.Status, payload), progress
	}
}

// verifySigned checks the reply's correlation and signature as pace-cc
// will: correlation recomputed from what was sent, signature under the
// node's key over the object field as sent.
func verifySigned(t testing.TB, req verbs.CompileRequest, source []byte, o outcome, nodeKey ed25519.PublicKey) {
	t.Helper()
	if want := req.Correlation(source); o.reply.Correlation != want {
		t.Fatalf("correlation %s, want %s", o.reply.Correlation, want)
	}
	if err := lease.VerifyReply(nodeKey, o.reply.Correlation, o.reply.Object, o.reply.Signature); err != nil {
		t.Fatalf("signature: %v", err)
	}
}

// openObject opens the reply's object envelope as the client does.
func openObject(t testing.TB, o outcome) []byte {
	t.Helper()
	obj, err := wire.Open(o.reply.Object, 256<<20, wire.SupportedCodecs)
	if err != nil {
		t.Fatalf("object envelope: %v", err)
	}
	return bytes.Clone(obj)
}
