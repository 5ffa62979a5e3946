package binarycache

import (
	"bytes"
	"crypto/rand"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/aeadbox"
	"github.com/buildfleet/buildfleet/internal/gradient/narstore"
	"github.com/buildfleet/buildfleet/internal/gradient/narstore/narstoretest"
	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/store/sqlite"
)

// rig is a binary cache over a real SQLite store and real NAR storage: a public and a
// private cache, each with a key, and API keys (admin, pinned to each cache).
type rig struct {
	t          testing.TB
	dir        string
	db         store.Store
	nars       *narstore.Store
	keys       *Keys
	handler    *Handler
	srv        *httptest.Server
	pub, priv  store.Cache
	admin      string // API keys: unpinned,
	pinnedPub  string // pinned to pub,
	pinnedPriv string // pinned to priv
}

func newRig(t testing.TB, mods ...func(*Config)) *rig {
	t.Helper()
	dir := t.TempDir()
	db, err := sqlite.Open(filepath.Join(dir, "gradient.db"))
	check(t, err)
	t.Cleanup(func() { db.Close() })
	nars, err := narstore.Open(dir)
	check(t, err)
	box, err := aeadbox.New(bytes.Repeat([]byte{1}, 32))
	check(t, err)
	r := &rig{t: t, dir: dir, db: db, nars: nars, keys: NewKeys(box, "", nil)}
	r.pub, r.priv = r.cache("pub", true), r.cache("priv", false)
	r.admin, r.pinnedPub, r.pinnedPriv = r.apiKey(""), r.apiKey(r.pub.ID), r.apiKey(r.priv.ID)
	cfg := Config{Store: db, NARs: nars, Keys: r.keys}
	for _, m := range mods {
		m(&cfg)
	}
	r.handler = New(cfg)
	mux := http.NewServeMux()
	r.handler.Register(mux)
	r.srv = httptest.NewServer(mux)
	t.Cleanup(r.srv.Close)
	return r
}

func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (r *rig) cache(name string, public bool) store.Cache {
	sealed, _, err := r.keys.Create(name)
	check(r.t, err)
	c, err := r.db.CreateCache(r.t.Context(), store.NewCache{Name: name, Public: public, SigningKeyEnc: sealed})
	check(r.t, err)
	return c
}

func (r *rig) apiKey(cacheID string) string {
	key, hash, err := peertoken.MintAPIKey(rand.Reader)
	check(r.t, err)
	_, err = r.db.CreateAPIKey(r.t.Context(), store.NewAPIKey{Owner: "test", KeyHash: hash, CacheID: cacheID})
	check(r.t, err)
	return key
}

func (r *rig) publicKey(c store.Cache) string {
	pk, err := r.keys.PublicKey(c.SigningKeyEnc)
	check(r.t, err)
	return pk
}

// storedPath is one stored path: its row and its object.
type storedPath struct {
	row store.CachedPath
	obj narstoretest.Object
}

// put stores a NAR of about size bytes for a path called name in the caches, as an upload
// would: bytes committed first, then the row.
func (r *rig) put(name string, size int, refs []string, caches ...store.Cache) storedPath {
	r.t.Helper()
	obj := narstoretest.Make(narstoretest.NAR(size, uint64(len(name)*size+1)))
	sp := "/nix/store/" + storeHashOf(name) + "-" + name
	st, err := r.nars.Stage(sp)
	check(r.t, err)
	check(r.t, st.Write(0, obj.Compressed))
	sh, _ := store.StoreHash(sp)
	check(r.t, st.Commit(sh, obj.Expect))
	row := store.CachedPath{StorePath: sp, NarHash: obj.Expect.NarHash.String(), NarSize: obj.Expect.NarSize,
		FileHash: obj.Expect.FileHash.String(), FileSize: obj.Expect.FileSize, References: refs,
		Deriver: "/nix/store/" + storeHashOf(name+".drv") + "-" + name + ".drv"}
	ids := make([]string, len(caches))
	for i, c := range caches {
		ids[i] = c.ID
	}
	check(r.t, r.db.PutCachedPath(r.t.Context(), row, ids))
	row.StoreHash = sh
	return storedPath{row: row, obj: obj}
}

// storeHashOf makes a valid 32-character nix32 hash from a name.
func storeHashOf(name string) string {
	const alphabet = "0123456789abcdfghijklmnpqrsvwxyz"
	out := make([]byte, 32)
	h := uint64(14695981039346656037)
	for i := range out {
		for _, c := range []byte(name) {
			h = (h ^ uint64(c)) * 1099511628211
		}
		h = (h ^ uint64(i)) * 1099511628211
		out[i] = alphabet[h%32]
	}
	return string(out)
}

func (r *rig) objectFile(p storedPath) string {
	return filepath.Join(r.dir, "nar", p.row.StoreHash+".nar.zst")
}

// corrupt flips one byte of the stored object at off, keeping its size.
func (r *rig) corrupt(p storedPath, off int64) {
	r.t.Helper()
	f, err := os.OpenFile(r.objectFile(p), os.O_RDWR, 0)
	check(r.t, err)
	defer f.Close()
	b := make([]byte, 1)
	_, err = f.ReadAt(b, off)
	check(r.t, err)
	b[0] ^= 0xff
	_, err = f.WriteAt(b, off)
	check(r.t, err)
}

// get fetches a cache URL with an optional Authorization header and returns the status and
// the body (err when the body was cut short).
func (r *rig) get(urlPath, auth string) (int, []byte, error) {
	r.t.Helper()
	req, err := http.NewRequest(http.MethodGet, r.srv.URL+urlPath, nil)
	check(r.t, err)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := r.srv.Client().Do(req)
	check(r.t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}
