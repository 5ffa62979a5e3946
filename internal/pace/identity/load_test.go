package identity

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// newDir is a fresh, absent state directory under a private temp dir.
func newDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "state")
}

func mustLoad(t *testing.T, dir string, opts Options) *Identity {
	t.Helper()
	id, err := Load(dir, opts)
	if err != nil {
		t.Fatalf("Load(%s): %v", dir, err)
	}
	return id
}

func TestMintThenReloadGivesTheSameIdentity(t *testing.T) {
	dir := newDir(t)
	first := mustLoad(t, dir, Options{})
	if !first.KeyMinted || first.IDSource != IDMinted {
		t.Fatalf("first load: minted=%v source=%v, want minted", first.KeyMinted, first.IDSource)
	}
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(first.NodeID) {
		t.Fatalf("minted node id %q is not 32 hex characters", first.NodeID)
	}
	again := mustLoad(t, dir, Options{})
	if again.KeyMinted || again.IDSource != IDRecorded {
		t.Fatalf("second load: minted=%v source=%v, want recorded", again.KeyMinted, again.IDSource)
	}
	if !again.Key.Public().Equal(first.Key.Public()) || again.NodeID != first.NodeID {
		t.Fatalf("reload changed the identity: %v %s vs %v %s", first.Key, first.NodeID, again.Key, again.NodeID)
	}
	if got := again.LogLines(); got[0] != "identity key "+first.Key.PublicText()+" (recorded)" || got[1] != "node identity "+first.NodeID+" (recorded)" {
		t.Fatalf("log lines %q", got)
	}
	if got := first.LogLines(); !strings.HasSuffix(got[0], "(newly minted)") || !strings.HasSuffix(got[1], "(newly minted)") {
		t.Fatalf("log lines %q", got)
	}
}

func TestMintedFilesAreProtected(t *testing.T) {
	dir := newDir(t)
	id := mustLoad(t, dir, Options{})
	for name, want := range map[string]os.FileMode{KeyFile: 0o600, NodeIDFile: 0o644} {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil || fi.Mode() != want {
			t.Fatalf("%s: mode %v (err %v), want %v", name, fi.Mode(), err, want)
		}
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Fatalf("created state directory has mode %v, want 0700", fi.Mode().Perm())
	}
	data, _ := os.ReadFile(filepath.Join(dir, KeyFile))
	lines := strings.Split(string(data), "\n")
	if len(lines) != 4 || lines[0] != "pace-node-key v1" || lines[2] != "public-key "+id.Key.PublicText() || lines[3] != "" {
		t.Fatalf("key file layout:\n%s", data)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Fatalf("state directory holds %d entries, want node-key and node-id only", len(entries))
	}
}

func TestNodeIDOverride(t *testing.T) {
	dir := newDir(t)
	if id := mustLoad(t, dir, Options{NodeID: "n1"}); id.NodeID != "n1" || id.IDSource != IDFromOverride {
		t.Fatalf("override: %q %v", id.NodeID, id.IDSource)
	}
	if got := mustLoad(t, dir, Options{NodeID: "n1"}).LogLines()[1]; got != "node identity n1 (recorded)" {
		t.Fatalf("log line %q", got)
	}
	if id := mustLoad(t, dir, Options{}); id.NodeID != "n1" {
		t.Fatalf("without the override: %q", id.NodeID)
	}
	_, err := Load(dir, Options{NodeID: "n2"})
	if !errors.Is(err, ErrUnusableStateFile) || !strings.Contains(err.Error(), `"n1"`) || !strings.Contains(err.Error(), `"n2"`) {
		t.Fatalf("a different --node-id: %v", err)
	}
	if _, err := Load(newDir(t), Options{NodeID: "has space"}); !errors.Is(err, ErrNodeID) {
		t.Fatalf("invalid --node-id: %v", err)
	}
}

func TestRandomFailureMintsNothing(t *testing.T) {
	dir := newDir(t)
	if _, err := Load(dir, Options{Random: failingRandom{}}); !errors.Is(err, ErrNoRandom) {
		t.Fatalf("got %v, want ErrNoRandom", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, KeyFile)); !os.IsNotExist(err) {
		t.Fatalf("a key file exists after a failed mint: %v", err)
	}
}

func TestInterruptedMintLeavesNoSecretBehind(t *testing.T) {
	dir := newDir(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, ".node-key.tmp-12345")
	if err := os.WriteFile(stale, []byte("half a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustLoad(t, dir, Options{})
	if _, err := os.Lstat(stale); !os.IsNotExist(err) {
		t.Fatalf("stale temp file survived: %v", err)
	}
}

func TestConcurrentFirstStartsAgreeOnOneIdentity(t *testing.T) {
	dir := newDir(t)
	ids := make([]*Identity, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := Load(dir, Options{})
			if err != nil {
				t.Errorf("Load: %v", err)
				return
			}
			ids[i] = id
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, id := range ids[1:] {
		if !id.Key.Public().Equal(ids[0].Key.Public()) || id.NodeID != ids[0].NodeID {
			t.Fatalf("concurrent loads disagree: %v/%s vs %v/%s", id.Key, id.NodeID, ids[0].Key, ids[0].NodeID)
		}
	}
}

func TestDefaultStateDir(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		euid        int
		env         map[string]string
		dir, reason string
	}{
		{0, map[string]string{"HOME": "/root", "XDG_STATE_HOME": "/x"}, "/var/lib/pace-node", ReasonMachineWide},
		{1000, map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "/home/u/st"}, "/home/u/st/pace-node", ReasonPerUser},
		{1000, map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "relative"}, "/home/u/.local/state/pace-node", ReasonPerUser},
		{1000, map[string]string{"HOME": "/home/u"}, "/home/u/.local/state/pace-node", ReasonPerUser},
	}
	for _, c := range cases {
		dir, reason, err := defaultStateDir(c.euid, env(c.env))
		if err != nil || dir != c.dir || reason != c.reason {
			t.Errorf("euid %d env %v: got %q %q %v, want %q %q", c.euid, c.env, dir, reason, err, c.dir, c.reason)
		}
	}
	if _, _, err := defaultStateDir(1000, env(nil)); !errors.Is(err, ErrNoStateDir) {
		t.Errorf("no HOME: %v", err)
	}
	if !strings.HasPrefix(ReasonPerUser, "per-user: ") || !strings.HasPrefix(ReasonMachineWide, "machine-wide: ") {
		t.Error("reasons must start with their kind")
	}
}
