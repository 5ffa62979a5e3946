package worker

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/toolchain"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// slowFixture serves a fake gcc that runs until the test lets it go.
func slowFixture(t *testing.T, opts ...option) (*fixture, string) {
	t.Helper()
	path, dir := fakeCompiler(t, "gcc")
	hold(t, dir)
	f := newFixture(t, append([]option{withPins(Pin{Fingerprint: fakeFP, Compiler: path})}, opts...)...).start()
	return f, dir
}

// startSlow sends a COMPILE over TCP and waits until its compiler runs.
func startSlow(t *testing.T, f *fixture, addr string, size int) *client {
	t.Helper()
	running := f.w.InFlight()
	c := dial(t, addr)
	req := f.request(tinyTU+strings.Repeat(" ", size), "-O2", "-x", "cpp-output")
	c.send(req.Append(nil))
	waitFor(t, "the slow compile to hold its slot", func() bool { return f.w.InFlight() == running+1 })
	return c
}

// TestSlotsPlusOneIsRefusedAtOnce: with every slot busy the next COMPILE
// is answered no-capacity at once, nothing queued (pace-node §5.1); once a
// slot frees, the next one runs.
func TestSlotsPlusOneIsRefusedAtOnce(t *testing.T) {
	f, dir := slowFixture(t, withSlots(2))
	addr := f.server()
	a, b := startSlow(t, f, addr, 0), startSlow(t, f, addr, 0)
	c := dial(t, addr)
	c.send(f.request(tinyTU, "-O2", "-x", "cpp-output").Append(nil))
	o, _ := c.receive(nil)
	if o.refusal.Code != wire.CodeNoCapacity || !strings.Contains(o.refusal.Message, "slots") {
		t.Fatalf("slot 3 answered %s %v", o.status, o.refusal)
	}
	if n := f.w.Counters().RefusedNoSlot.Load(); n != 1 {
		t.Fatalf("no_slot = %d", n)
	}
	unhold(t, dir)
	for _, cl := range []*client{a, b} {
		if o, _ := cl.receive(nil); o.status != wire.StatusOk || string(openObject(t, o)) != "OBJ" {
			t.Fatalf("held compile answered %s %v", o.status, o.refusal)
		}
	}
	c.send(f.request(tinyTU, "-O2", "-x", "cpp-output").Append(nil))
	if o, _ := c.receive(nil); o.status != wire.StatusOk {
		t.Fatalf("after the slots freed: %v", o.refusal)
	}
}

// TestBudgetFullIsEndpointBusy: slots are free but the running compile's
// charge (max(frame, rawLen)) fills the budget: endpoint-busy, and the
// heartbeat reports the worker budget-limited (pace-node §5.2).
func TestBudgetFullIsEndpointBusy(t *testing.T) {
	const budget = 64 << 10
	f, dir := slowFixture(t, withSlots(4), withBudget(budget))
	addr := f.server()
	held := startSlow(t, f, addr, 40<<10)
	if got := f.w.Status().BytesInFlight; got < 40<<10 {
		t.Fatalf("running compile charged %d bytes", got)
	}
	c := dial(t, addr)
	req := f.request(tinyTU, "-O2", "-x", "cpp-output")
	req.Source = seal(t, wire.CodecZstd, []byte(strings.Repeat("x", 30<<10))) // small frame, 30 KiB declared
	c.send(req.Append(nil))
	o, _ := c.receive(nil)
	if o.refusal.Code != wire.CodeEndpointBusy {
		t.Fatalf("answered %s %v, want endpoint-busy", o.status, o.refusal)
	}
	if n := f.w.Counters().RefusedEndpointBusy.Load(); n != 1 {
		t.Fatalf("endpoint_busy = %d", n)
	}
	if st := f.w.Status(); !st.BudgetLimited || st.InFlight != 1 {
		t.Fatalf("status %+v: want budget-limited with one compile running", st)
	}
	unhold(t, dir)
	if o, _ := held.receive(nil); o.status != wire.StatusOk {
		t.Fatalf("held compile: %v", o.refusal)
	}
	waitFor(t, "the charge to be given back", func() bool { return f.w.Status().BytesInFlight == 0 })
	if f.w.Status().BudgetLimited {
		t.Fatal("budget-limited with nothing charged")
	}
}

// TestProgressWhileCompiling: a compile longer than the progress interval
// sends Progress frames, then its terminal reply (pace-wire §1.13).
func TestProgressWhileCompiling(t *testing.T) {
	f, dir := slowFixture(t, withProgress(5*time.Millisecond))
	c := dial(t, f.server())
	req := f.request(tinyTU, "-O2", "-x", "cpp-output")
	c.send(req.Append(nil))
	o, progress := c.receive(func(n int) {
		if n == 3 {
			unhold(t, dir) // the compile ends only after three Progress frames arrived
		}
	})
	if o.status != wire.StatusOk || progress < 3 {
		t.Fatalf("answered %s after %d Progress frames", o.status, progress)
	}
	if string(o.reply.Stdout) != "fake stdout\n" || string(o.reply.Stderr) != "fake stderr\n" {
		t.Fatalf("streams %q %q", o.reply.Stdout, o.reply.Stderr)
	}
	verifySigned(t, req, []byte(tinyTU), o, f.node.Public())
}

// TestClientGoneKillsTheCompile: a client that hangs up is noticed at the
// next Progress write; its compile is killed and counted abandoned, and
// still counted completed.
func TestClientGoneKillsTheCompile(t *testing.T) {
	f, dir := slowFixture(t, withProgress(5*time.Millisecond))
	c := startSlow(t, f, f.server(), 0)
	c.conn.Close()
	waitFor(t, "the compile to be killed", func() bool { return f.w.InFlight() == 0 })
	cnt := f.w.Counters()
	if cnt.JobsAbandonedClientGone.Load() != 1 || cnt.JobsCompleted.Load() != 1 || cnt.JobsStarted.Load() != 1 {
		t.Fatalf("abandoned %d completed %d started %d", cnt.JobsAbandonedClientGone.Load(), cnt.JobsCompleted.Load(), cnt.JobsStarted.Load())
	}
	assertNoJobDirs(t, f.w)
	assertNoLiveFake(t, dir)
}

// assertNoLiveFake checks every fake compiler process recorded in dir has
// exited (killed with its process group).
func assertNoLiveFake(t *testing.T, dir string) {
	t.Helper()
	pids, _ := filepath.Glob(filepath.Join(dir, "pid.*"))
	for _, p := range pids {
		pid := strings.TrimPrefix(filepath.Base(p), "pid.")
		waitFor(t, "fake compiler "+pid+" to exit", func() bool {
			_, err := os.Stat("/proc/" + pid)
			return err != nil
		})
	}
}

// TestScratchDirsAreUniqueAndRemoved: compiles running together each get
// their own scratch directory under the root, and none survives its job.
func TestScratchDirsAreUniqueAndRemoved(t *testing.T) {
	const n = 8
	f, dir := slowFixture(t, withSlots(n))
	addr := f.server()
	clients := make([]*client, n)
	for i := range clients {
		clients[i] = startSlow(t, f, addr, i)
	}
	unhold(t, dir)
	for _, c := range clients {
		if o, _ := c.receive(nil); o.status != wire.StatusOk {
			t.Fatalf("compile: %v", o.refusal)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "cwds"))
	if err != nil {
		t.Fatal(err)
	}
	cwds := strings.Fields(string(data))
	seen := map[string]bool{}
	for _, d := range cwds {
		if seen[d] || filepath.Dir(d) != f.w.scratch.dir {
			t.Fatalf("scratch dirs %q: %s repeated or outside %s", cwds, d, f.w.scratch.dir)
		}
		seen[d] = true
	}
	if len(seen) != n {
		t.Fatalf("%d scratch dirs for %d compiles", len(seen), n)
	}
	waitFor(t, "every job to be released", func() bool { return f.w.InFlight() == 0 })
	assertNoJobDirs(t, f.w)
}

// TestStopWaitsForRunningCompiles: Stop refuses new work at once, waits
// for the running compile, which delivers its reply, and reports nothing
// abandoned (pace-node §5.7).
func TestStopWaitsForRunningCompiles(t *testing.T) {
	f, dir := slowFixture(t)
	addr := f.server()
	running := startSlow(t, f, addr, 0)
	stopped := make(chan DrainReport, 1)
	go func() { stopped <- f.w.Stop(context.Background(), 0) }()
	waitFor(t, "stop to begin", func() bool { return f.w.Status().Stopping })

	c := dial(t, addr)
	c.send(f.request(tinyTU, "-O2", "-x", "cpp-output").Append(nil))
	if o, _ := c.receive(nil); o.refusal.Code != wire.CodeNoCapacity || !strings.Contains(o.refusal.Message, "stopping") {
		t.Fatalf("COMPILE during stop answered %v", o.refusal)
	}
	select {
	case r := <-stopped:
		t.Fatalf("Stop returned %+v while a compile ran", r)
	default:
	}
	unhold(t, dir)
	if o, _ := running.receive(nil); o.status != wire.StatusOk {
		t.Fatalf("running compile: %v", o.refusal)
	}
	if r := <-stopped; len(r.Abandoned) != 0 {
		t.Fatalf("abandoned %v", r.Abandoned)
	}
}

// TestStopAbandonsAtTheDrainTimeout: compiles still running at the
// timeout are killed and named; the node exits 75 for them.
func TestStopAbandonsAtTheDrainTimeout(t *testing.T) {
	f, dir := slowFixture(t)
	c := startSlow(t, f, f.server(), 0)
	r := f.w.Stop(context.Background(), time.Millisecond)
	if len(r.Abandoned) != 1 || !strings.Contains(r.Abandoned[0], "a.c") {
		t.Fatalf("abandoned %q", r.Abandoned)
	}
	if o, _ := c.receive(nil); o.refusal.Code != wire.CodeRequestDeadlineExceeded {
		t.Fatalf("abandoned compile answered %s %v", o.status, o.refusal)
	}
	assertNoLiveFake(t, dir)
}

// blockingProber holds every probe until released.
type blockingProber struct {
	release chan struct{}
}

func (p *blockingProber) Identify(ctx context.Context, c string) (toolchain.Identity, error) {
	<-p.release
	return toolchain.Identity{Compiler: c, Banner: "gcc (Test) 1.2.3"}, nil
}

func (p *blockingProber) Fingerprint(context.Context, toolchain.Identity) (string, error) {
	return fakeFP, nil
}

// TestSurveyInFlight: until the first survey ends every COMPILE is
// refused worker-toolchain-survey-in-flight, after a valid lease was
// checked; then the surveyed toolchain serves.
func TestSurveyInFlight(t *testing.T) {
	p := &blockingProber{release: make(chan struct{})}
	f := newFixture(t, withSurvey(SurveyConfig{Pins: []Pin{{Compiler: realGCC(t)}}, Prober: p}))
	f.w.Start(context.Background())
	o := f.compile(f.request(tinyTU, "-O2", "-x", "cpp-output"))
	if o.refusal.Code != wire.CodeWorkerToolchainSurveyPending {
		t.Fatalf("answered %s %v", o.status, o.refusal)
	}
	if n := f.w.Counters().RefusedSurveyInFlight.Load(); n != 1 {
		t.Fatalf("survey_in_flight = %d", n)
	}
	close(p.release)
	if _, err := f.w.WaitSurvey(context.Background()); err != nil {
		t.Fatal(err)
	}
	if o := f.compile(f.request(tinyTU, "-O2", "-x", "cpp-output")); o.status != wire.StatusOk {
		t.Fatalf("after the survey: %v", o.refusal)
	}
}

// TestCordonLetsRunningCompilesFinish: cordon refuses new compiles, the
// running one delivers, the state goes draining → drained, and uncordon
// serves again.
func TestCordonLetsRunningCompilesFinish(t *testing.T) {
	f, dir := slowFixture(t)
	addr := f.server()
	running := startSlow(t, f, addr, 0)
	if state, inFlight := f.w.Cordon(); state != CordonDraining || inFlight != 1 {
		t.Fatalf("cordon: state %d in flight %d", state, inFlight)
	}
	select {
	case <-f.w.Changes():
	default:
		t.Fatal("cordon did not wake the heartbeat")
	}
	c := dial(t, addr)
	c.send(f.request(tinyTU, "-O2", "-x", "cpp-output").Append(nil))
	if o, _ := c.receive(nil); o.refusal.Code != wire.CodeNoCapacity {
		t.Fatalf("cordoned worker answered %v", o.refusal)
	}
	unhold(t, dir)
	if o, _ := running.receive(nil); o.status != wire.StatusOk {
		t.Fatalf("running compile: %v", o.refusal)
	}
	waitFor(t, "the drain", func() bool { return f.w.CordonState() == CordonDrained })
	f.w.Uncordon()
	c.send(f.request(tinyTU, "-O2", "-x", "cpp-output").Append(nil))
	if o, _ := c.receive(nil); o.status != wire.StatusOk {
		t.Fatalf("after uncordon: %v", o.refusal)
	}
}
