package nixexec_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
	"github.com/buildfleet/buildfleet/internal/gradient/nixexec/nixexectest"
)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func newNix(t *testing.T) *nixexec.Nix {
	dir := filepath.Join("/nix/var/nix/gcroots", "gradient-test-"+filepath.Base(t.TempDir()))
	t.Cleanup(func() { os.RemoveAll(dir) })
	return nixexec.New(nixexec.Options{GCRootDir: dir})
}

// fetched clones and archives a fresh test flake.
func fetched(t *testing.T, n *nixexec.Nix) (nixexectest.Flake, string, nixexec.Archive) {
	ctx := testContext(t)
	f := nixexectest.NewFlake(t)
	ref, err := n.Clone(ctx, nixexec.CloneRequest{URL: f.URL, Commit: f.Commit, Dir: filepath.Join(t.TempDir(), "checkout")})
	if err != nil {
		t.Fatal(err)
	}
	arch, err := n.ArchiveFlake(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	return f, ref, arch
}

func entry(t *testing.T, ev nixexec.Evaluation, attr string) string {
	t.Helper()
	for _, e := range ev.EntryPoints {
		if e.Attr == attr {
			return e.DrvPath
		}
	}
	t.Fatalf("no entry point %s in %+v", attr, ev.EntryPoints)
	return ""
}

// gradient-server §6.2 and gradient-server §8.2: clone, archive, expand packages.* and walk
// the closure; c depends on a and b.
func TestFetchEvaluateAndWalkTheClosure(t *testing.T) {
	n := newNix(t)
	ctx := testContext(t)
	f, ref, arch := fetched(t, n)
	if !strings.HasPrefix(arch.Source, nixexec.StoreDir+"/") || !strings.HasSuffix(arch.Source, "-source") || len(arch.Inputs) != 0 {
		t.Fatalf("archive = %+v", arch)
	}
	ev, err := n.EvaluateWildcards(ctx, ref, []string{"packages.*"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.EntryPoints) != 3 || len(ev.Errors) != 0 {
		t.Fatalf("evaluation = %+v", ev)
	}
	pkgs := "packages." + f.System + "."
	a, b, c := entry(t, ev, pkgs+"a"), entry(t, ev, pkgs+"b"), entry(t, ev, pkgs+"c")
	drvs, err := n.ShowDerivations(ctx, []string{c}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(drvs) != 3 {
		t.Fatalf("closure of c has %d derivations, want 3", len(drvs))
	}
	dc, da, db := drvs[c], drvs[a], drvs[b]
	if got := dc.Dependencies(); !slices.Equal(got, sorted(a, b)) {
		t.Fatalf("c depends on %v, want a and b", got)
	}
	if len(da.Dependencies()) != 0 || len(db.Dependencies()) != 0 {
		t.Fatalf("a or b has dependencies: %v %v", da.InputDrvs, db.InputDrvs)
	}
	if da.TimeoutSecs != 3600 || da.MaxSilentSecs != 600 || db.Pname != "bee" || !dc.PreferLocalBuild || dc.AllowSubstitutes || !da.AllowSubstitutes {
		t.Fatalf("attributes not read: a=%+v b=%+v c=%+v", da, db, dc)
	}
	if dc.System != f.System || dc.Outputs["out"] == "" || da.IsFixedOutput {
		t.Fatalf("c = %+v", dc)
	}
	// The same flake through its archived source in the store (a Cached flake source).
	storeRef, err := n.StoreFlakeRef(ctx, arch.Source)
	if err != nil {
		t.Fatal(err)
	}
	again, err := n.EvaluateWildcards(ctx, storeRef, []string{"packages." + f.System + ".c"})
	if err != nil || len(again.EntryPoints) != 1 || again.EntryPoints[0].DrvPath != c {
		t.Fatalf("evaluating %s: %+v, %v", storeRef, again, err)
	}
}

func sorted(s ...string) []string { slices.Sort(s); return s }

// gradient-server §6.2: exclusions, "#" without recursion, attribute errors and patterns that
// match nothing.
func TestWildcardErrorsAndExclusions(t *testing.T) {
	n := newNix(t)
	ctx := testContext(t)
	f, ref, _ := fetched(t, n)
	ev, err := n.EvaluateWildcards(ctx, ref, []string{"tests.*, !tests.#.slow, !tests.#.needy, !tests.#.gated, !tests.#.gated2", "bad.#.#", "nothing.here", "bad.*"})
	if err != nil {
		t.Fatal(err)
	}
	var attrs []string
	for _, e := range ev.EntryPoints {
		attrs = append(attrs, e.Attr)
	}
	sys := f.System
	want := sorted("tests."+sys+".silent", "tests."+sys+".fail", "tests."+sys+".sleeper", "tests."+sys+".ticking", "tests."+sys+".fod", "bad."+sys+".ok")
	if slices.Sort(attrs); !slices.Equal(attrs, want) {
		t.Fatalf("entry points %v, want %v", attrs, want)
	}
	var errAttrs []string
	for _, e := range ev.Errors {
		errAttrs = append(errAttrs, e.Attr)
	}
	slices.Sort(errAttrs)
	// broken is matched by two patterns and reported once.
	if wantErr := sorted("bad."+sys+".broken", "nothing.here"); !slices.Equal(errAttrs, wantErr) {
		t.Fatalf("errors %+v, want one for %v", ev.Errors, wantErr)
	}
	fod := entry(t, ev, "tests."+sys+".fod")
	drvs, err := n.ShowDerivations(ctx, []string{fod}, false)
	if err != nil || !drvs[fod].IsFixedOutput {
		t.Fatalf("fod: %+v, %v", drvs[fod], err)
	}
}

// An error Nix cannot catch in the language is narrowed down to the attribute that raised it.
func TestUncatchableErrorIsNarrowedToItsAttribute(t *testing.T) {
	n := newNix(t)
	ctx := testContext(t)
	f := nixexectest.NewFlake(t)
	flake := filepath.Join(f.Dir, "flake.nix")
	text, _ := os.ReadFile(flake)
	// A missing attribute is an error tryEval does not catch.
	patched := strings.Replace(string(text), `notdrv = { x = 1; };`, `notdrv = { x = 1; }; gone = { }.missing;`, 1)
	if err := os.WriteFile(flake, []byte(patched), 0o644); err != nil {
		t.Fatal(err)
	}
	commit := gitCommit(t, f.Dir)
	ev, err := n.EvaluateWildcards(ctx, "git+file://"+f.Dir+"?rev="+commit, []string{"bad.#.#"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.EntryPoints) != 1 || !strings.HasSuffix(ev.EntryPoints[0].Attr, ".ok") {
		t.Fatalf("entry points %+v", ev.EntryPoints)
	}
	var gone *nixexec.AttrError
	for i, e := range ev.Errors {
		if strings.HasSuffix(e.Attr, ".gone") {
			gone = &ev.Errors[i]
		}
	}
	if gone == nil || !strings.Contains(gone.Message, "missing") {
		t.Fatalf("errors %+v: want one for bad.%s.gone naming the missing attribute", ev.Errors, f.System)
	}
}

func gitCommit(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", "git -c user.email=t@example.invalid -c user.name=t commit -qam change && git rev-parse HEAD")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// gradient-server §8.2: build c, read its metadata, dump its NAR and import it into a separate
// store.
func TestBuildDumpAndImportRoundTrip(t *testing.T) {
	n := newNix(t)
	ctx := testContext(t)
	f, ref, _ := fetched(t, n)
	ev, err := n.EvaluateWildcards(ctx, ref, []string{"packages.*"})
	if err != nil {
		t.Fatal(err)
	}
	c := entry(t, ev, "packages."+f.System+".c")
	var log bytes.Buffer
	res, err := n.Realise(ctx, c, nixexec.BuildOptions{Timeout: time.Minute, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Outputs) != 1 || !strings.Contains(log.String(), "building c") || !strings.Contains(log.String(), "building a") {
		t.Fatalf("outputs %v, log %q", res.Outputs, log.String())
	}
	out := res.Outputs[0]
	if outs, err := n.Outputs(ctx, c); err != nil || !slices.Equal(outs, res.Outputs) {
		t.Fatalf("Outputs(c) = %v, %v", outs, err)
	}
	infos, err := n.PathInfo(ctx, []string{out})
	if err != nil {
		t.Fatal(err)
	}
	info := infos[0]
	if info.Deriver != c || len(info.References) != 0 || !strings.HasPrefix(info.NarHash, "sha256:") || len(info.NarHash) != 59 {
		t.Fatalf("path info %+v", info)
	}
	var compressed bytes.Buffer
	stats, err := n.DumpNAR(ctx, out, &compressed)
	if err != nil {
		t.Fatal(err)
	}
	fileSum := sha256.Sum256(compressed.Bytes())
	if stats.NarSize != info.NarSize || nixexec.SHA256Text(stats.NarHash) != info.NarHash ||
		stats.FileSize != uint64(compressed.Len()) || !bytes.Equal(stats.FileHash, fileSum[:]) {
		t.Fatalf("dump stats %+v disagree with path-info %+v / %d compressed bytes", stats, info, compressed.Len())
	}
	other := nixexec.New(nixexec.Options{Store: t.TempDir()})
	item := nixexec.ImportItem{Path: out, References: info.References, Deriver: c, NarHash: stats.NarHash,
		Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(compressed.Bytes())), nil }}
	if invalid, err := other.Invalid(ctx, []string{out}); err != nil || len(invalid) != 1 {
		t.Fatalf("before import: invalid %v, %v", invalid, err)
	}
	if err := other.Import(ctx, []nixexec.ImportItem{item}); err != nil {
		t.Fatal(err)
	}
	imported, err := other.PathInfo(ctx, []string{out})
	if err != nil || imported[0].NarHash != info.NarHash || imported[0].Deriver != c {
		t.Fatalf("imported %+v, %v; want hash %s", imported, err, info.NarHash)
	}
}

// A pulled NAR whose content does not hash to the announced nar_hash is never registered.
func TestImportRefusesANarWithTheWrongHash(t *testing.T) {
	n := newNix(t)
	ctx := testContext(t)
	f, ref, _ := fetched(t, n)
	ev, err := n.EvaluateWildcards(ctx, ref, []string{"packages." + f.System + ".a"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := n.Realise(ctx, ev.EntryPoints[0].DrvPath, nixexec.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var compressed bytes.Buffer
	stats, err := n.DumpNAR(ctx, res.Outputs[0], &compressed)
	if err != nil {
		t.Fatal(err)
	}
	wrong := slices.Clone(stats.NarHash)
	wrong[0] ^= 1
	other := nixexec.New(nixexec.Options{Store: t.TempDir()})
	err = other.Import(ctx, []nixexec.ImportItem{{Path: res.Outputs[0], NarHash: wrong,
		Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(compressed.Bytes())), nil }}})
	if !errors.Is(err, nixexec.ErrNarHashMismatch) {
		t.Fatalf("import err = %v, want ErrNarHashMismatch", err)
	}
	if invalid, err := other.Invalid(ctx, res.Outputs); err != nil || len(invalid) != 1 {
		t.Fatalf("path was registered despite the wrong hash: invalid=%v err=%v", invalid, err)
	}
}

// The trailer this package writes is byte for byte what nix-store --export writes.
func TestExportTrailerMatchesNixStoreExport(t *testing.T) {
	n := newNix(t)
	ctx := testContext(t)
	f, ref, _ := fetched(t, n)
	ev, err := n.EvaluateWildcards(ctx, ref, []string{"packages." + f.System + ".c"})
	if err != nil {
		t.Fatal(err)
	}
	c := ev.EntryPoints[0].DrvPath // a .drv: it has references (a.drv, b.drv)
	want, err := exec.CommandContext(ctx, "nix-store", "--export", c).Output()
	if err != nil {
		t.Fatal(err)
	}
	nar, err := exec.CommandContext(ctx, "nix-store", "--dump", c).Output()
	if err != nil {
		t.Fatal(err)
	}
	infos, err := n.PathInfo(ctx, []string{c})
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	got.Write([]byte{1, 0, 0, 0, 0, 0, 0, 0})
	got.Write(nar)
	if err := nixexec.WriteExportTrailer(&got, c, infos[0].ShortReferences(), ""); err != nil {
		t.Fatal(err)
	}
	got.Write(make([]byte, 8))
	if len(infos[0].References) != 2 || !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("export stream differs from nix-store --export (%d vs %d bytes), refs %v", got.Len(), len(want), infos[0].References)
	}
}

// gradient-server §6.3 timeouts and failure kinds: exit 101 for the wall clock and for
// silence, 100 for a failing builder.
func TestBuildFailureKinds(t *testing.T) {
	n := newNix(t)
	ctx := testContext(t)
	f, ref, _ := fetched(t, n)
	ev, err := n.EvaluateWildcards(ctx, ref, []string{"tests.*"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		attr string
		opts nixexec.BuildOptions
		want nixexec.FailureKind
	}{
		{"slow", nixexec.BuildOptions{Timeout: 2 * time.Second}, nixexec.Timeout},
		{"silent", nixexec.BuildOptions{MaxSilent: 2 * time.Second}, nixexec.Timeout},
		{"fail", nixexec.BuildOptions{}, nixexec.Permanent},
	}
	var wg sync.WaitGroup
	for _, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := n.Realise(ctx, entry(t, ev, "tests."+f.System+"."+c.attr), c.opts)
			var be *nixexec.BuildError
			if !errors.As(err, &be) || be.Kind != c.want {
				t.Errorf("%s: err = %v, want a %s BuildError", c.attr, err, c.want)
			}
		}()
	}
	wg.Wait()
	if left := nixexectest.SleepersLeft(f.SleepArg); left != 0 {
		t.Fatalf("%d sleeping builders left after the timeout", left)
	}
}

// gradient-server §6.5: cancelling a build stops nix and its builder, which runs in a session
// of its own.
func TestCancelledBuildLeavesNoProcessBehind(t *testing.T) {
	n := newNix(t)
	ctx := testContext(t)
	f, ref, _ := fetched(t, n)
	ev, err := n.EvaluateWildcards(ctx, ref, []string{"tests." + f.System + ".sleeper"})
	if err != nil {
		t.Fatal(err)
	}
	buildCtx, cancel := context.WithCancelCause(ctx)
	started := make(chan struct{})
	log := &watchWriter{want: "started", seen: started}
	done := make(chan error, 1)
	go func() {
		_, err := n.Realise(buildCtx, ev.EntryPoints[0].DrvPath, nixexec.BuildOptions{Log: log})
		done <- err
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("build ended before it started sleeping: %v", err)
	}
	waitFor(t, "the builder to sleep", func() bool { return nixexectest.SleepersLeft(f.SleepArg) == 1 })
	abort := errors.New("aborted by test")
	cancel(abort)
	if err := <-done; !errors.Is(err, abort) {
		t.Fatalf("err = %v, want the cancellation cause", err)
	}
	if left := nixexectest.SleepersLeft(f.SleepArg); left != 0 {
		t.Fatalf("%d sleeping builders left after the abort", left)
	}
}

// watchWriter closes seen once want has been written.
type watchWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func TestShowConfigReadsTheSystem(t *testing.T) {
	cfg, err := newNix(t).ShowConfig(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.System == "" || cfg.Systems()[0] != cfg.System {
		t.Fatalf("config %+v", cfg)
	}
}

func TestGCRootsProtectUntilReleased(t *testing.T) {
	n := newNix(t)
	ctx := testContext(t)
	f, ref, _ := fetched(t, n)
	ev, err := n.EvaluateWildcards(ctx, ref, []string{"packages." + f.System + ".b"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := n.Realise(ctx, ev.EntryPoints[0].DrvPath, nixexec.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	roots, err := n.NewRoots("job:1")
	if err != nil {
		t.Fatal(err)
	}
	if err := roots.Add(res.Outputs...); err != nil {
		t.Fatal(err)
	}
	if err := n.Delete(ctx, res.Outputs); err == nil {
		t.Fatal("a rooted path was deleted")
	}
	if err := roots.Release(); err != nil {
		t.Fatal(err)
	}
	if err := n.Delete(ctx, res.Outputs); err != nil {
		t.Fatalf("deleting after release: %v", err)
	}
}

// waitFor polls cond until it holds; the test's own deadline bounds it.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
