package toolchain

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// witness is the cheap evidence that a file is unchanged since a result was computed from it.
type witness struct {
	Path  string
	Size  int64
	MTime int64 // nanoseconds
	Inode uint64
}

func statWitness(path string) (witness, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return witness{}, fmt.Errorf("toolchain: %w", err)
	}
	w := witness{Path: path, Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		w.Inode = st.Ino
	}
	return w, nil
}

func (w witness) line() string {
	return fmt.Sprintf("%d %d %d %s", w.Size, w.MTime, w.Inode, w.Path)
}

func parseWitness(line string) (witness, bool) {
	parts := strings.SplitN(line, " ", 4)
	if len(parts) != 4 {
		return witness{}, false
	}
	size, e1 := strconv.ParseInt(parts[0], 10, 64)
	mtime, e2 := strconv.ParseInt(parts[1], 10, 64)
	ino, e3 := strconv.ParseUint(parts[2], 10, 64)
	if e1 != nil || e2 != nil || e3 != nil {
		return witness{}, false
	}
	return witness{Path: parts[3], Size: size, MTime: mtime, Inode: ino}, true
}

// stillHolds reports whether every witness still describes its file.
func stillHolds(ws []witness) bool {
	for _, w := range ws {
		now, err := statWitness(w.Path)
		if err != nil || now != w {
			return false
		}
	}
	return true
}
