package storetest

import (
	"errors"
	"io/fs"

	"github.com/buildfleet/buildfleet/internal/pace/store"
)

func (f *FaultFS) MkdirAll(path string, perm fs.FileMode) error {
	if err := f.check(OpMkdir); err != nil {
		return err
	}
	return f.Base.MkdirAll(path, perm)
}

func (f *FaultFS) CreateTemp(dir, pattern string) (store.File, error) {
	if err := f.check(OpCreate); err != nil {
		return nil, err
	}
	file, err := f.Base.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f}, nil
}

func (f *FaultFS) ReadFile(name string, limit int64) ([]byte, error) {
	if err := f.check(OpRead); err != nil {
		return nil, err
	}
	return f.Base.ReadFile(name, limit)
}

func (f *FaultFS) Rename(oldpath, newpath string) error {
	if err := f.check(OpRename); err != nil {
		return err
	}
	return f.Base.Rename(oldpath, newpath)
}

func (f *FaultFS) Remove(name string) error {
	if err := f.check(OpRemove); err != nil {
		return err
	}
	return f.Base.Remove(name)
}

func (f *FaultFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := f.check(OpReadDir); err != nil {
		return nil, err
	}
	return f.Base.ReadDir(name)
}

func (f *FaultFS) SyncDir(name string) error {
	if err := f.check(OpSyncDir); err != nil {
		return err
	}
	return f.Base.SyncDir(name)
}

// faultFile routes a file's calls through its FaultFS. An injected write fault writes half of
// its bytes first, as a full disk does; after a crash point nothing reaches the file.
type faultFile struct {
	store.File
	fs *FaultFS
}

func (f *faultFile) Write(p []byte) (int, error) {
	if err := f.fs.check(OpWrite); err != nil {
		if errors.Is(err, ErrCrashed) {
			return 0, err
		}
		n, _ := f.File.Write(p[:len(p)/2])
		return n, err
	}
	return f.File.Write(p)
}

func (f *faultFile) Sync() error {
	if err := f.fs.check(OpSync); err != nil {
		return err
	}
	return f.File.Sync()
}

// Close always closes the descriptor (a dead process's descriptors close too) but still
// reports an injected failure.
func (f *faultFile) Close() error {
	err := f.fs.check(OpClose)
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	return err
}
