package toolchain

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
)

const cacheHeader = "pace-toolchain-cache v1"

// cached is one remembered result: the witnesses it was computed from and its named values.
type cached struct {
	witnesses []witness
	values    map[string]string
}

// cachePath names the file remembering kind ("id" or "fp") for a resolved compiler path.
func cachePath(dir, kind, compiler string) string {
	sum := cachekey.Content([]byte(compiler)).Hex()
	return filepath.Join(dir, sum[:32]+"."+kind)
}

// loadCached returns the remembered result when the file parses and every witness still holds.
func loadCached(path string) (cached, bool) {
	f, err := os.Open(path)
	if err != nil {
		return cached{}, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	if !sc.Scan() || sc.Text() != cacheHeader {
		return cached{}, false
	}
	c := cached{values: map[string]string{}}
	for sc.Scan() {
		kind, rest, _ := strings.Cut(sc.Text(), " ")
		switch kind {
		case "witness":
			w, ok := parseWitness(rest)
			if !ok {
				return cached{}, false
			}
			c.witnesses = append(c.witnesses, w)
		case "value":
			name, v, _ := strings.Cut(rest, "=")
			c.values[name] = v
		default:
			return cached{}, false
		}
	}
	if sc.Err() != nil || !stillHolds(c.witnesses) {
		return cached{}, false
	}
	return c, true
}

// storeCached writes the result atomically (temp file, rename); failures only cost a recompute.
func storeCached(path string, c cached) error {
	var b strings.Builder
	b.WriteString(cacheHeader + "\n")
	for _, w := range c.witnesses {
		b.WriteString("witness " + w.line() + "\n")
	}
	for name, v := range c.values {
		if strings.ContainsAny(v, "\n\r") {
			return fmt.Errorf("toolchain: value %s spans lines", name)
		}
		b.WriteString("value " + name + "=" + v + "\n")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("toolchain: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("toolchain: %w", err)
	}
	_, werr := tmp.WriteString(b.String())
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("toolchain: writing %s: %v %v", tmp.Name(), werr, cerr)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("toolchain: %w", err)
	}
	return nil
}
