package nixexec_test

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
)

// DumpNAR reads through the store: a path that exists only in a chroot store (a worker with
// a store of its own) dumps with its recorded hash, and a .drv dumps as the file itself,
// exactly as `nix-store --dump` of it, not as its outputs.
func TestDumpNARReadsThroughTheStore(t *testing.T) {
	ctx := testContext(t)
	root := t.TempDir()
	src := filepath.Join(t.TempDir(), "only-in-a-chroot-store")
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	if err := os.WriteFile(src, []byte(hex.EncodeToString(nonce[:])), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("nix-store", "--store", root, "--add", src).Output()
	if err != nil {
		t.Fatalf("nix-store --add: %v", err)
	}
	p := strings.TrimSpace(string(out))
	if _, err := os.Stat(p); err == nil {
		t.Fatalf("%s exists in the machine's store too", p)
	}
	chroot := nixexec.New(nixexec.Options{Store: root})
	stats, err := chroot.DumpNAR(ctx, p, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	infos, err := chroot.PathInfo(ctx, []string{p})
	if err != nil || nixexec.SHA256Text(stats.NarHash) != infos[0].NarHash {
		t.Fatalf("dumped %s, path-info %+v, %v", nixexec.SHA256Text(stats.NarHash), infos, err)
	}

	n := newNix(t)
	f, ref, _ := fetched(t, n)
	ev, err := n.EvaluateWildcards(ctx, ref, []string{"packages.*"})
	if err != nil {
		t.Fatal(err)
	}
	drv := entry(t, ev, "packages."+f.System+".a")
	stats, err = n.DumpNAR(ctx, drv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want, err := exec.Command("nix-store", "--dump", drv).Output()
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(want); string(stats.NarHash) != string(sum[:]) || stats.NarSize != uint64(len(want)) {
		t.Fatalf("DumpNAR(%s) is not the .drv's own NAR", drv)
	}
	if invalid, err := n.Invalid(ctx, []string{drv}); err != nil || len(invalid) != 0 {
		t.Fatalf("the .drv itself: invalid %v, %v", invalid, err)
	}
}
