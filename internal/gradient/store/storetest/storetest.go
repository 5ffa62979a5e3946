// Package storetest is the conformance suite every store.Store backend passes: each rule the
// store keeps (gradient-protocol §4.2, gradient-server §6, gradient-protocol §7.3,
// gradient-server §9) is a subtest that cites its section. A backend's test calls Run with a
// function that opens a fresh, empty, migrated store.
package storetest

import (
	"context"
	"crypto/sha256"
	"runtime/debug"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/clocktest"
	"github.com/buildfleet/buildfleet/internal/gradient/nixhash"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// Opener opens a fresh empty store with the given options; it registers its own cleanup.
type Opener func(tb testing.TB, opts ...store.Option) store.Store

// Run runs the whole suite.
func Run(t *testing.T, open Opener) {
	groups := []struct {
		name  string
		tests []test
	}{
		{"Admin", adminTests},
		{"Identity", identityTests},
		{"Teams", teamTests},
		{"Graph", graphTests},
		{"Dispatch", dispatchTests},
		{"EvalJob", evalJobTests},
		{"Failures", failureTests},
		{"Lost", lostTests},
		{"Cache", cacheTests},
		{"BinaryCache", binaryCacheTests},
		{"Logs", logTests},
		{"LiveLogs", liveLogTests},
		{"Property", propertyTests},
		{"Triggers", triggerTests},
		{"RepoCredentials", repoCredTests},
		{"Retention", retentionTests},
		{"Statuses", statusTests},
		{"Upstreams", upstreamTests},
		{"WebUI", webUITests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) {
					defer failOnPanic(t)
					tc.run(t, newEnv(t, open))
				})
			}
		})
	}
}

type test struct {
	name string
	run  func(t *testing.T, e *env)
}

// env is one subtest's fresh store with a project subscribed to a cache.
type env struct {
	t       *testing.T
	ctx     context.Context
	s       store.Store
	clock   *clocktest.Clock
	project store.Project
	cache   store.Cache
	open    Opener
}

func newEnv(t *testing.T, open Opener) *env {
	clock := clocktest.New(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	e := &env{t: t, ctx: context.Background(), clock: clock, open: open}
	e.s = open(t, store.WithClock(clock.Now))
	e.project = e.newProject("main")
	e.cache = must(e.s.CreateCache(e.ctx, store.NewCache{Name: "main-cache", Public: true}))
	check(t, e.s.SubscribeCache(e.ctx, e.project.ID, e.cache.ID))
	return e
}

func (e *env) newProject(name string) store.Project {
	return must(e.s.CreateProject(e.ctx, store.NewProject{Name: name, RepoURL: "https://example.org/" + name + ".git",
		Branch: "main", Wildcards: []string{"packages.*"}}))
}

// failedCall is must's panic value: Run's recover turns it into a test failure with the
// stack of the failing call.
type failedCall struct {
	err   error
	stack []byte
}

// must returns v, or fails the running subtest (through failOnPanic) when err is set. Use it
// on the test goroutine only.
func must[T any](v T, err error) T {
	if err != nil {
		panic(failedCall{err: err, stack: debug.Stack()})
	}
	return v
}

func failOnPanic(t *testing.T) {
	r := recover()
	if r == nil {
		return
	}
	if f, ok := r.(failedCall); ok {
		t.Fatalf("unexpected error: %v\n%s", f.err, f.stack)
	}
	panic(r)
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// storePath makes a valid store path for a name: a 32-character nix32 hash derived from it.
func storePath(name string) string {
	sum := sha256.Sum256([]byte(name))
	hash := make([]byte, 32)
	for i := range hash {
		hash[i] = nixhash.Alphabet[sum[i]%32]
	}
	return "/nix/store/" + string(hash) + "-" + name
}

func drvPath(name string) string { return storePath(name + ".drv") }

// drv describes a derivation for x86_64-linux with one output and the named dependencies.
func drv(name string, deps ...string) store.Derivation {
	d := store.Derivation{DrvPath: drvPath(name), System: "x86_64-linux", Pname: name,
		Outputs: []store.Output{{Name: "out", Path: storePath(name)}}}
	for _, dep := range deps {
		d.Dependencies = append(d.Dependencies, drvPath(dep))
	}
	return d
}

// entry marks a derivation as an entry point.
func entry(d store.Derivation) store.Derivation {
	d.Attr = "packages.x86_64-linux." + d.Pname
	return d
}
