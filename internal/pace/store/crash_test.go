package store_test

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/store"
)

// The helper process: the test binary re-executed with STORE_HELPER set. Its reports go to
// file descriptor 3, a pipe the parent reads.
const helperEnv = "STORE_HELPER"

func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		return // not a helper: nothing to test here
	}
	report := os.NewFile(3, "report")
	dir := os.Getenv("STORE_DIR")
	switch mode {
	case "burst":
		putBurstForever(dir, os.Getenv("STORE_ROUND"), report)
	case "open":
		_, err := store.Open(store.Options{Dir: dir})
		fmt.Fprintf(report, "%v\n", err)
	}
	os.Exit(0)
}

// putBurstForever runs 8 concurrent writers until killed, reporting each acknowledged key.
func putBurstForever(dir, round string, report *os.File) {
	s, err := store.Open(store.Options{Dir: dir})
	if err != nil {
		fmt.Fprintf(report, "open failed: %v\n", err)
		os.Exit(1)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for n := 0; ; n++ {
				key := fmt.Sprintf("r%s-w%d-%d", round, w, n)
				if err := s.Put([]byte(key), valueFor(key, sizeFor(key, 1, 256<<10))); err != nil {
					fmt.Fprintf(report, "put failed: %v\n", err)
					os.Exit(1)
				}
				mu.Lock()
				fmt.Fprintf(report, "ack %s\n", key)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// startHelper runs the helper process in mode and returns it with the read end of its report.
func startHelper(t *testing.T, mode, dir string, env ...string) (*exec.Cmd, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), append(env, helperEnv+"="+mode, "STORE_DIR="+dir)...)
	cmd.ExtraFiles = []*os.File{w}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = w.Close() // the child holds the only write end: EOF comes when it dies
	return cmd, r
}

// TestKillDuringBurstLeavesOnlyCompleteValues kill -9s a process in the middle of a burst of
// concurrent Puts, three times over the same directory. After each kill, every value the child
// acknowledged is present with its exact bytes, every blob on disk verifies and belongs to a
// key the child wrote, and no temp file survives the reopen.
func TestKillDuringBurstLeavesOnlyCompleteValues(t *testing.T) {
	dir := t.TempDir()
	var acked []string
	for round := range 3 {
		acked = append(acked, killMidBurst(t, dir, round)...)
		verifyAfterCrash(t, dir, acked)
	}
}

func killMidBurst(t *testing.T, dir string, round int) []string {
	cmd, report := startHelper(t, "burst", dir, fmt.Sprintf("STORE_ROUND=%d", round))
	defer report.Close()
	lines := bufio.NewScanner(report)
	var acked []string
	for lines.Scan() {
		line := lines.Text()
		key, ok := strings.CutPrefix(line, "ack ")
		if !ok {
			t.Fatalf("helper: %s", line)
		}
		acked = append(acked, key)
		if len(acked) == 40 { // well inside the burst: eight writers are mid-Put right now
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
		}
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("helper ended with %v, want death by SIGKILL (it acknowledged %d puts)", err, len(acked))
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("helper ended with %v, want death by SIGKILL", err)
	}
	return acked
}

func verifyAfterCrash(t *testing.T, dir string, acked []string) {
	t.Helper()
	s, err := store.Open(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, key := range acked {
		mustGet(t, s, key, valueFor(key, sizeFor(key, 1, 256<<10)))
	}
	blobs, _, temps := walkStore(t, dir)
	if len(temps) != 0 {
		t.Fatalf("temp files survived the reopen: %v", temps)
	}
	verified := 0
	for _, path := range blobFiles(t, dir) {
		key := keyOfBlob(t, path)
		mustGet(t, s, key, valueFor(key, sizeFor(key, 1, 256<<10)))
		verified++
	}
	if st := s.Stats(); st.CorruptRemoved != 0 || st.Disk.Items != int64(blobs) || verified != blobs {
		t.Fatalf("after the crash: %d corrupt, %d indexed, %d files, %d verified", st.CorruptRemoved, st.Disk.Items, blobs, verified)
	}
	if blobs < len(acked) {
		t.Fatalf("%d blobs on disk for %d acknowledged puts", blobs, len(acked))
	}
	t.Logf("%d acknowledged, %d blobs verified, %d torn temp files swept", len(acked), blobs, s.Stats().TempFilesSwept)
}

func blobFiles(t *testing.T, dir string) []string {
	paths, err := filepath.Glob(filepath.Join(dir, "objects", "*", strings.Repeat("?", 64)))
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// keyOfBlob reads the key a blob records (documented header: keyLen is the u32 at offset 8).
func keyOfBlob(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 24 {
		t.Fatalf("read %s: %v (%d bytes)", path, err, len(b))
	}
	n := binary.BigEndian.Uint32(b[8:])
	if int(n) > len(b)-24 {
		t.Fatalf("%s: key length %d in a %d-byte blob", path, n, len(b))
	}
	return string(b[20 : 20+n])
}

func TestAnotherProcessIsRefusedTheDirectory(t *testing.T) {
	dir := t.TempDir()
	openStore(t, store.Options{Dir: dir})
	cmd, report := startHelper(t, "open", dir)
	defer report.Close()
	line, _ := bufio.NewReader(report).ReadString('\n')
	_ = cmd.Wait()
	if !strings.Contains(line, dir) || !strings.Contains(line, "in use") || !strings.Contains(line, fmt.Sprint(os.Getpid())) {
		t.Fatalf("the other process was told %q; want a refusal naming %s and the holder's pid", line, dir)
	}
}
