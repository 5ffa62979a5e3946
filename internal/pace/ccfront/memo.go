package ccfront

import (
	"syscall"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
	"github.com/buildfleet/buildfleet/internal/pace/hitmemo"
)

// memo reads the memo filed under key and checks that it still holds: the same compiler
// binary, and every input file either unchanged by its stat (outside the racy window) or, read
// again, with the content hash it had. A file that changed in content, or that is gone, means a
// miss for the front: pace-cc-full decides what it is.
func (f *front) memo(key cachekey.Digest) (hitmemo.Entry, string) {
	b, err := readFile(hitmemo.Path(f.cfg.stateDir, key))
	if err != nil {
		return hitmemo.Entry{}, "no hit memo"
	}
	e, err := hitmemo.Decode(b)
	if err != nil {
		return hitmemo.Entry{}, "hit memo unreadable"
	}
	var st syscall.Stat_t
	if syscall.Stat(f.compiler, &st) != nil || hitmemo.StatOf(&st) != e.Compiler {
		return hitmemo.Entry{}, "the compiler changed"
	}
	for i := range e.Files {
		if !holds(&e.Files[i], e.RecordedAt) {
			return hitmemo.Entry{}, e.Files[i].Path + " changed"
		}
	}
	return e, ""
}

func holds(file *hitmemo.File, recordedAt int64) bool {
	var st syscall.Stat_t
	if syscall.Stat(file.Path, &st) != nil {
		return false
	}
	if hitmemo.Trusted(hitmemo.StatOf(&st), file.Stat, recordedAt) {
		return true
	}
	data, err := readFile(file.Path)
	return err == nil && cachekey.Content(data) == file.Hash
}
