package identity

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// snapshot is what "left untouched" means for a path: its type, mode,
// owner, size, modification time and bytes (or link target).
type snapshot struct {
	mode    os.FileMode
	uid     int
	size    int64
	modTime int64
	content []byte
}

func snap(t *testing.T, path string) snapshot {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("snapshot %s: %v", path, err)
	}
	uid, _ := ownerOf(fi)
	s := snapshot{mode: fi.Mode(), uid: uid, size: fi.Size(), modTime: fi.ModTime().UnixNano()}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		s.content = []byte(target)
	case fi.Mode().IsRegular():
		s.content, _ = os.ReadFile(path)
	}
	return s
}

func (a snapshot) equal(b snapshot) bool {
	return a.mode == b.mode && a.uid == b.uid && a.size == b.size && a.modTime == b.modTime && bytes.Equal(a.content, b.content)
}

// validKeyFile is a well-formed node-key for a fixed key.
func validKeyFile(t *testing.T, b byte) []byte { return encodeKeyFile(testKey(t, b)) }

// foreignUID is an account that is neither this process's nor root's.
const foreignUID = 4242

// unusableCase plants something at node-key and expects Load to refuse it
// with a sentence containing every one of want.
type unusableCase struct {
	name  string
	plant func(t *testing.T, s *stateDir, path string)
	want  []string
}

func writeFile(t *testing.T, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // beyond the umask
		t.Fatal(err)
	}
}

var unusableKeyCases = []unusableCase{
	{"empty", func(t *testing.T, _ *stateDir, p string) { writeFile(t, p, nil, 0o600) }, []string{"truncated"}},
	{"truncated", func(t *testing.T, _ *stateDir, p string) { writeFile(t, p, validKeyFile(t, 1)[:40], 0o600) }, []string{"truncated"}},
	{"missing last line", func(t *testing.T, _ *stateDir, p string) {
		data := validKeyFile(t, 1)
		writeFile(t, p, data[:bytes.LastIndex(data[:len(data)-1], []byte("\n"))+1], 0o600)
	}, []string{"truncated or malformed"}},
	{"another format", func(t *testing.T, _ *stateDir, p string) {
		writeFile(t, p, []byte("-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n"), 0o600)
	}, []string{"not a pace node key"}},
	{"seed not base64url", func(t *testing.T, _ *stateDir, p string) {
		writeFile(t, p, bytes.Replace(validKeyFile(t, 1), []byte("private-seed "), []byte("private-seed +/"), 1), 0o600)
	}, []string{"private-seed line"}},
	{"halves disagree", func(t *testing.T, _ *stateDir, p string) {
		a, b := strings.Split(string(validKeyFile(t, 1)), "\n"), strings.Split(string(validKeyFile(t, 2)), "\n")
		writeFile(t, p, []byte(strings.Join([]string{a[0], a[1], b[2], ""}, "\n")), 0o600)
	}, []string{"halves disagree"}},
	{"far too large", func(t *testing.T, _ *stateDir, p string) { writeFile(t, p, make([]byte, 5000), 0o600) }, []string{"far larger"}},
	{"group-readable", func(t *testing.T, _ *stateDir, p string) { writeFile(t, p, validKeyFile(t, 1), 0o640) }, []string{"mode 0640", "chmod 600 " + "<path>"}},
	{"other-readable", func(t *testing.T, _ *stateDir, p string) { writeFile(t, p, validKeyFile(t, 1), 0o604) }, []string{"mode 0604", "chmod 600"}},
	{"group-writable", func(t *testing.T, _ *stateDir, p string) { writeFile(t, p, validKeyFile(t, 1), 0o620) }, []string{"mode 0620"}},
	{"owner cannot read", func(t *testing.T, _ *stateDir, p string) { writeFile(t, p, validKeyFile(t, 1), 0o200) }, []string{"not readable by its owner", "chmod 600"}},
	{"a symlink", func(t *testing.T, _ *stateDir, p string) {
		target := filepath.Join(t.TempDir(), "real-key")
		writeFile(t, target, validKeyFile(t, 1), 0o600)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}, []string{"symbolic link"}},
	{"a directory", func(t *testing.T, _ *stateDir, p string) {
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}, []string{"not a regular file"}},
	{"a FIFO", func(t *testing.T, _ *stateDir, p string) {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}, []string{"not a regular file"}},
	{"owned by another account", plantForeignOwned, []string{"owned by uid", "another account"}},
}

// plantForeignOwned makes node-key belong to an account that is neither
// the loader's nor root: as root by chown, otherwise by loading as a
// different (non-root) account than the one that owns the file.
func plantForeignOwned(t *testing.T, s *stateDir, p string) {
	writeFile(t, p, validKeyFile(t, 1), 0o600)
	if os.Geteuid() == 0 {
		if err := os.Chown(p, foreignUID, foreignUID); err != nil {
			t.Fatal(err)
		}
		return
	}
	s.euid = os.Geteuid() + 1
}

func TestUnusableKeyFileIsRefusedAndNeverReplaced(t *testing.T) {
	for _, c := range unusableKeyCases {
		t.Run(c.name, func(t *testing.T) {
			dir := newDir(t)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			s := &stateDir{dir: dir, euid: os.Geteuid()}
			path := filepath.Join(dir, KeyFile)
			c.plant(t, s, path)
			before := snap(t, path)
			_, err := load(s, Options{Random: fixedRandom(9)})
			if !errors.Is(err, ErrUnusableStateFile) {
				t.Fatalf("got %v, want ErrUnusableStateFile", err)
			}
			msg := err.Error()
			for _, w := range append(c.want, path, "never replaced") {
				if !strings.Contains(msg, strings.ReplaceAll(w, "<path>", path)) {
					t.Errorf("message %q does not contain %q", msg, w)
				}
			}
			if after := snap(t, path); !before.equal(after) {
				t.Fatalf("node-key was touched: %+v -> %+v", before, after)
			}
			if _, err := os.Lstat(filepath.Join(dir, NodeIDFile)); !os.IsNotExist(err) {
				t.Fatalf("node-id was minted although the key was refused: %v", err)
			}
		})
	}
}

func TestUnusableNodeIDFileIsRefusedAndNeverReplaced(t *testing.T) {
	cases := map[string]struct {
		content string
		mode    os.FileMode
	}{
		"two lines":      {"n1\nn2\n", 0o644},
		"a space":        {"n 1\n", 0o644},
		"empty":          {"", 0o644},
		"a lone newline": {"\n", 0o644},
		"a NUL":          {"\x00", 0o644},
		"CRLF":           {"n1\r\n", 0o644},
		"too long":       {strings.Repeat("n", 65), 0o644},
		"group-writable": {"n1\n", 0o664},
		"other-writable": {"n1\n", 0o646},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := newDir(t)
			mustLoad(t, dir, Options{})
			path := filepath.Join(dir, NodeIDFile)
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			writeFile(t, path, []byte(c.content), c.mode)
			before := snap(t, path)
			if _, err := Load(dir, Options{}); !errors.Is(err, ErrUnusableStateFile) || !strings.Contains(err.Error(), path) {
				t.Fatalf("got %v, want a refusal naming %s", err, path)
			}
			if after := snap(t, path); !before.equal(after) {
				t.Fatal("node-id was touched")
			}
		})
	}
}

func TestStateDirWritableByOthersIsRefused(t *testing.T) {
	for _, mode := range []os.FileMode{0o770, 0o707, 0o777, 0o720} {
		dir := newDir(t)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		_, err := Load(dir, Options{})
		if !errors.Is(err, ErrUnusableStateDir) || !strings.Contains(err.Error(), "chmod go-w "+dir) {
			t.Fatalf("mode %04o: got %v, want the chmod go-w remedy", mode, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Fatalf("mode %04o: something was written into a refused directory", mode)
		}
	}
	dir := newDir(t)
	if err := os.Mkdir(dir, 0o750); err != nil { // group may read and list: accepted
		t.Fatal(err)
	}
	mustLoad(t, dir, Options{})
}

func TestStateDirOwnedByAnotherAccountIsRefused(t *testing.T) {
	dir := newDir(t)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	s := &stateDir{dir: dir, euid: os.Geteuid()}
	if os.Geteuid() == 0 {
		if err := os.Chown(dir, foreignUID, foreignUID); err != nil {
			t.Fatal(err)
		}
	} else {
		s.euid = os.Geteuid() + 1
	}
	if _, err := load(s, Options{}); !errors.Is(err, ErrUnusableStateDir) || !strings.Contains(err.Error(), "owned by uid") {
		t.Fatalf("got %v, want a refusal of the foreign-owned directory", err)
	}
}

func TestStateDirThatIsAFileIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	writeFile(t, path, []byte("x"), 0o600)
	if _, err := Load(path, Options{}); !errors.Is(err, ErrUnusableStateDir) {
		t.Fatalf("got %v", err)
	}
}
