package cc

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
)

// The local manifest copies: every manifest this user's pace-cc fetched or recorded, kept in
// the state directory under its key. A direct hit whose local copy still validates needs one
// exchange with the cache (the object) instead of two. A copy is only a hint: it is validated
// like a fetched manifest, and when it does not hold the cache's own manifest is asked.

func (r *run) localManifestPath(key cachekey.Digest) string {
	hex := key.Hex()
	return filepath.Join(r.cfg.StatsDir, "manifests", hex[:2], hex)
}

func (r *run) readLocalManifest(key cachekey.Digest) ([]byte, bool) {
	if r.cfg.StatsDir == "" {
		return nil, false
	}
	b, err := os.ReadFile(r.localManifestPath(key))
	return b, err == nil
}

// keepLocalManifest writes the copy atomically; a failure only costs an exchange later. Every
// manifest kept here holds for this compile, so the front's hit memo is filed with it.
func (r *run) keepLocalManifest(key cachekey.Digest, manifest []byte) {
	if r.cfg.StatsDir == "" {
		return
	}
	r.rememberHit(manifest)
	path := r.localManifestPath(key)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	tmp := fmt.Sprintf("%s.%d.%d", path, os.Getpid(), time.Now().UnixNano())
	if os.WriteFile(tmp, manifest, 0o644) != nil || os.Rename(tmp, path) != nil {
		os.Remove(tmp)
	}
}
