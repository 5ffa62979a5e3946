package binarycache

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/narstore/narstoretest"
	"github.com/buildfleet/buildfleet/internal/gradient/nixexec/nixexectest"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// realPaths adds two fresh text paths to the local Nix store, the second referring to the
// first, and uploads both to the caches as a worker would: the NAR `nix-store --dump`
// writes, zstd level 6, committed, then recorded. It returns [dependency, top].
func (r *rig) realPaths(caches ...store.Cache) []storedPath {
	r.t.Helper()
	nixexectest.RequireNix(r.t)
	nonce := make([]byte, 8)
	rand.Read(nonce)
	tag := hex.EncodeToString(nonce)
	dep := nixOut(r.t, "nix-instantiate", "--read-write-mode", "--eval", "-E",
		`builtins.toFile "gradient-dep-`+tag+`" "dependency `+tag+`"`)
	top := nixOut(r.t, "nix-instantiate", "--read-write-mode", "--eval", "-E",
		`builtins.toFile "gradient-top-`+tag+`" "top refers to ${builtins.storePath `+dep+`}"`)
	return []storedPath{r.upload(dep, nil, caches), r.upload(top, []string{dep}, caches)}
}

func (r *rig) upload(storePath string, refs []string, caches []store.Cache) storedPath {
	r.t.Helper()
	nar, err := exec.Command("nix-store", "--dump", storePath).Output()
	check(r.t, err)
	obj := narstoretest.Make(nar)
	hash, err := store.StoreHash(storePath)
	check(r.t, err)
	st, err := r.nars.Stage(storePath)
	check(r.t, err)
	check(r.t, st.Write(0, obj.Compressed))
	check(r.t, st.Commit(hash, obj.Expect))
	row := store.CachedPath{StorePath: storePath, StoreHash: hash, NarHash: obj.Expect.NarHash.String(),
		NarSize: obj.Expect.NarSize, FileHash: obj.Expect.FileHash.String(), FileSize: obj.Expect.FileSize, References: refs}
	ids := []string{}
	for _, c := range caches {
		ids = append(ids, c.ID)
	}
	check(r.t, r.db.PutCachedPath(r.t.Context(), row, ids))
	return storedPath{row: row, obj: obj}
}

func nixOut(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return strings.Trim(strings.TrimSpace(string(out)), `"`)
}

// nixCopy runs `nix copy --from <cache URL>` into a fresh store under the test's temp dir
// and reports the output and whether the path is then valid there.
func (r *rig) nixCopy(t *testing.T, cache, trustedKey, netrc, path string) (string, bool) {
	t.Helper()
	dir := t.TempDir()
	dest := filepath.Join(dir, "store")
	args := []string{"--extra-experimental-features", "nix-command", "copy", "--from", r.srv.URL + "/cache/" + cache,
		"--store", dest, "--option", "trusted-public-keys", trustedKey, "--option", "substituters", "",
		"--option", "narinfo-cache-negative-ttl", "0", "--option", "narinfo-cache-positive-ttl", "0"}
	if netrc != "" {
		file := filepath.Join(dir, "netrc")
		check(t, os.WriteFile(file, []byte(netrc), 0o600))
		args = append(args, "--option", "netrc-file", file)
	}
	cmd := exec.Command("nix", append(args, path)...)
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
	out, _ := cmd.CombinedOutput()
	check := exec.Command("nix", "--extra-experimental-features", "nix-command", "path-info", "--store", dest, path)
	check.Env = cmd.Env
	return string(out), check.Run() == nil
}

// TestNixCopiesFromTheCache is the "done means" with real Nix: a fresh store
// substitutes a path and its dependency verified against the cache's key, refuses them
// under another key, needs the API key (netrc) for a private cache, and never takes a
// damaged NAR.
func TestNixCopiesFromTheCache(t *testing.T) {
	r := newRig(t)
	paths := r.realPaths(r.pub, r.priv)
	dep, top := paths[0].row.StorePath, paths[1].row.StorePath
	other, err := GenerateKey(r.keys.KeyName("pub"), bytes.NewReader(bytes.Repeat([]byte{9}, 64)))
	check(t, err)

	t.Run("right key: the closure is copied and valid", func(t *testing.T) {
		out, valid := r.nixCopy(t, "pub", r.publicKey(r.pub), "", top)
		if !valid {
			t.Fatalf("nix copy failed:\n%s", out)
		}
		if out, valid := r.nixCopy(t, "pub", r.publicKey(r.pub), "", dep); !valid {
			t.Fatalf("the dependency alone:\n%s", out)
		}
	})
	t.Run("another trusted key: refused", func(t *testing.T) {
		out, valid := r.nixCopy(t, "pub", other.PublicKey(), "", top)
		if valid || !strings.Contains(out, "signature") {
			t.Fatalf("copied under a key that did not sign it (valid=%v):\n%s", valid, out)
		}
	})
	t.Run("private cache: refused without the key, copied with it in netrc", func(t *testing.T) {
		if out, valid := r.nixCopy(t, "priv", r.publicKey(r.priv), "", top); valid {
			t.Fatalf("copied from a private cache without a key:\n%s", out)
		}
		netrc := "machine 127.0.0.1 login nix password " + r.pinnedPriv + "\n"
		if out, valid := r.nixCopy(t, "priv", r.publicKey(r.priv), netrc, top); !valid {
			t.Fatalf("with the key in netrc:\n%s", out)
		}
	})
	t.Run("a damaged NAR is never taken", func(t *testing.T) {
		r.corrupt(paths[1], paths[1].row.FileSize/2)
		out, valid := r.nixCopy(t, "pub", r.publicKey(r.pub), "", top)
		if valid {
			t.Fatalf("a damaged NAR was imported:\n%s", out)
		}
		if _, err := r.db.CachedPathByHash(t.Context(), r.pub.ID, paths[1].row.StoreHash); err == nil {
			t.Errorf("the damaged path's row was not demoted")
		}
	})
}
