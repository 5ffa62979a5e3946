package identity

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Refusals of the state directory and the files in it. An existing file is
// never replaced; the error names the file and the remedy.
var (
	ErrUnusableStateFile = errors.New("unusable state file")
	ErrUnusableStateDir  = errors.New("unusable state directory")
)

// stateDir reads and writes the identity files of one directory as one
// account (euid: the process's; tests pass another to see refusals).
type stateDir struct {
	dir  string
	euid int
	// dirSyncUnsupported counts directory fsyncs the filesystem refused.
	dirSyncUnsupported int
}

func (s *stateDir) path(name string) string { return filepath.Join(s.dir, name) }

// ownedByUs reports whether uid is this account or root, the only owners a
// state file or directory may have.
func (s *stateDir) ownedByUs(uid int) bool { return uid == s.euid || uid == 0 }

func (s *stateDir) unusable(name, problem, remedy string) error {
	return fmt.Errorf("%w %s: %s; it is never replaced: %s", ErrUnusableStateFile, s.path(name), problem, remedy)
}

// prepare creates the directory (0700) when absent and refuses one that is
// not a directory, is foreign-owned or is writable by group or other.
func (s *stateDir) prepare() error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("%w: cannot create %s: %w", ErrUnusableStateDir, s.dir, err)
	}
	fi, err := os.Stat(s.dir)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnusableStateDir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory; point --cluster-dir at a directory", ErrUnusableStateDir, s.dir)
	}
	if uid, ok := ownerOf(fi); !ok || !s.ownedByUs(uid) {
		return fmt.Errorf("%w: %s is owned by uid %d, not by this account (uid %d) or root; run pace-node as its owner or chown it",
			ErrUnusableStateDir, s.dir, uid, s.euid)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("%w: %s is writable by other accounts (mode %04o), so they could replace this node's identity; run: chmod go-w %s",
			ErrUnusableStateDir, s.dir, perm, s.dir)
	}
	return nil
}

// read returns the contents of name, or exists=false when it is absent. A
// secret file must be readable by its owner and by nobody else.
func (s *stateDir) read(name string, secret bool) (data []byte, exists bool, err error) {
	fi, err := os.Lstat(s.path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, s.unusable(name, fmt.Sprintf("it cannot be examined (%v)", err), "make it readable by this account")
	}
	if err := s.checkFileInfo(name, fi, secret); err != nil {
		return nil, true, err
	}
	f, err := openNoFollow(s.path(name))
	if err != nil {
		return nil, true, s.unusable(name, fmt.Sprintf("it is unreadable (%v)", err), "make it readable by this account (chmod 600, as its owner)")
	}
	defer f.Close()
	if now, err := f.Stat(); err != nil || !os.SameFile(fi, now) {
		return nil, true, s.unusable(name, "it changed while it was being opened", "stop whatever else is writing to the state directory")
	}
	data, err = io.ReadAll(io.LimitReader(f, maxStateFileLen+1))
	if err != nil {
		return nil, true, s.unusable(name, fmt.Sprintf("it is unreadable (%v)", err), "check the disk, or restore it from a backup")
	}
	if len(data) > maxStateFileLen {
		return nil, true, s.unusable(name, "it is far larger than an identity file", "restore it from a backup")
	}
	return data, true, nil
}

// checkFileInfo refuses a link, a non-regular file, a foreign owner and,
// for a secret, any permission beyond the owner's.
func (s *stateDir) checkFileInfo(name string, fi os.FileInfo, secret bool) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return s.unusable(name, "it is a symbolic link", "replace the link with the file itself, or point --cluster-dir at the directory that holds it")
	case !fi.Mode().IsRegular():
		return s.unusable(name, "it is not a regular file", "move it aside")
	}
	if uid, ok := ownerOf(fi); !ok || !s.ownedByUs(uid) {
		return s.unusable(name, fmt.Sprintf("it is owned by uid %d, another account", uid),
			fmt.Sprintf("run pace-node as its owner, or chown it to uid %d", s.euid))
	}
	perm := fi.Mode().Perm()
	if !secret {
		if perm&0o022 != 0 {
			return s.unusable(name, fmt.Sprintf("it is writable by other accounts (mode %04o)", perm), "run: chmod go-w "+s.path(name))
		}
		return nil
	}
	if perm&0o077 != 0 {
		return s.unusable(name, fmt.Sprintf("it is open to other accounts (mode %04o)", perm),
			fmt.Sprintf("run: chmod 600 %s (and, if others could read it, mint a new identity and re-admit this node)", s.path(name)))
	}
	if perm&0o400 == 0 {
		return s.unusable(name, fmt.Sprintf("it is not readable by its owner (mode %04o)", perm), "run: chmod 600 "+s.path(name))
	}
	return nil
}

// errAlreadyExists: create found the name taken (another process minted it
// first); the caller reads what is there.
var errAlreadyExists = errors.New("already exists")

// create publishes data under name without ever replacing a file: temp
// file, protection read back, write, fsync, hard link into place, remove
// the temp, fsync the directory.
func (s *stateDir) create(name string, data []byte, perm os.FileMode) (err error) {
	tmp, err := os.CreateTemp(s.dir, "."+name+".tmp-*")
	if err != nil {
		return fmt.Errorf("create %s: %w", s.path(name), err)
	}
	defer func() {
		tmp.Close()
		os.Remove(tmp.Name())
	}()
	if err := s.protect(tmp, perm); err != nil {
		return fmt.Errorf("create %s: %w", s.path(name), err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", tmp.Name(), err)
	}
	if err := os.Link(tmp.Name(), s.path(name)); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return errAlreadyExists
		}
		return fmt.Errorf("publish %s: %w", s.path(name), err)
	}
	return s.syncDir()
}

// protect sets the temp file's mode and reads the protection back before
// anything secret is written into it.
func (s *stateDir) protect(f *os.File, perm os.FileMode) error {
	if err := f.Chmod(perm); err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if got := fi.Mode().Perm(); got != perm {
		return fmt.Errorf("mode reads back as %04o, not %04o", got, perm)
	}
	if uid, ok := ownerOf(fi); !ok || uid != s.euid {
		return fmt.Errorf("the new file is owned by uid %d, not this account (uid %d)", uid, s.euid)
	}
	return nil
}

// syncDir makes the new name durable. A filesystem that cannot sync a
// directory is counted (pace_state_directory_syncs_unsupported_total), not
// refused.
func (s *stateDir) syncDir() error {
	d, err := os.Open(s.dir)
	if err != nil {
		return fmt.Errorf("open %s to sync it: %w", s.dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
			s.dirSyncUnsupported++
			return nil
		}
		return fmt.Errorf("sync %s: %w", s.dir, err)
	}
	return nil
}

// sweepTemps removes temp files an interrupted create of name left behind:
// they may hold a key that was never published.
func (s *stateDir) sweepTemps(name string) {
	matches, _ := filepath.Glob(filepath.Join(s.dir, "."+name+".tmp-*"))
	for _, m := range matches {
		if fi, err := os.Lstat(m); err == nil && fi.Mode().IsRegular() && strings.HasPrefix(filepath.Base(m), "."+name+".tmp-") {
			if uid, ok := ownerOf(fi); ok && uid == s.euid {
				os.Remove(m)
			}
		}
	}
}
