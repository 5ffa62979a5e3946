package cc

import (
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
	"github.com/buildfleet/buildfleet/internal/pace/ccargs"
	"github.com/buildfleet/buildfleet/internal/pace/ccfront"
	"github.com/buildfleet/buildfleet/internal/pace/hitmemo"
	"github.com/buildfleet/buildfleet/internal/pace/value"
)

// The hit memo: whenever pace-cc-full keeps a manifest that holds here (one it recorded, or one
// it fetched and validated: keepLocalManifest) and when its local copy leads to a hit, it files
// what the front needs to serve the same command next time without this binary
// (internal/pace/ccfront): the object key, the outputs, and every input with its content hash
// and stat. A memo that cannot be written, or that points at an object the cache no longer
// has, only costs the front a hand-over.

var findCompiler = ccfront.FindCompiler

// maxMemosPerShard bounds the memo directory: 256 shards of at most this many memos, the least
// recently written going first.
const maxMemosPerShard = 128

// rememberHit files the memo for this invocation from a manifest that holds here.
func (r *run) rememberHit(manifest []byte) {
	if r.cfg.StatsDir == "" || r.cfg.NoDirect || r.cfg.SideOutputEnv != "" {
		return
	}
	m, err := value.DecodeManifest(manifest)
	if err != nil || len(m.ObjectKey) != cachekey.Size {
		return
	}
	e := hitmemo.Entry{Source: r.comp.Source, Output: r.abs(r.comp.Output)}
	if r.comp.Deps.Mode != ccargs.DepNone {
		e.Depfile = r.abs(r.comp.Deps.File)
	}
	copy(e.ObjectKey[:], m.ObjectKey)
	var st syscall.Stat_t
	if syscall.Stat(r.compiler, &st) != nil {
		return
	}
	e.Compiler = hitmemo.StatOf(&st)
	e.RecordedAt = time.Now().UnixNano()
	for _, me := range m.Entries {
		f := hitmemo.File{Path: r.localPath(me.Path)}
		if len(me.ContentHash) != cachekey.Size || syscall.Stat(f.Path, &st) != nil {
			return
		}
		copy(f.Hash[:], me.ContentHash)
		f.Stat = hitmemo.StatOf(&st)
		e.Files = append(e.Files, f)
	}
	key := hitmemo.Key(hitmemo.Invocation{Compiler: r.compiler, Cwd: r.cwd, Args: r.args, Env: r.cfg.MemoEnv})
	if b, err := hitmemo.Encode(e); err == nil {
		writeMemo(hitmemo.Path(r.cfg.StatsDir, key), b)
	}
}

// writeMemo writes through a temporary file and a rename, so the front never reads half a
// memo.
func writeMemo(path string, b []byte) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	f, tmp, err := createBeside(path)
	if err != nil {
		return
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil || os.Rename(tmp, path) != nil {
		os.Remove(tmp)
		return
	}
	pruneShard(filepath.Dir(path), maxMemosPerShard)
}

// pruneShard removes the oldest files of dir past max. A memo removed while a front reads it
// only costs that front a hand-over.
func pruneShard(dir string, max int) {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) <= max {
		return
	}
	type aged struct {
		name string
		mod  int64
	}
	files := make([]aged, 0, len(entries))
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			files = append(files, aged{e.Name(), info.ModTime().UnixNano()})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mod < files[j].mod })
	for i := 0; i < len(files)-max; i++ {
		os.Remove(filepath.Join(dir, files[i].name))
	}
}
