package raftstore

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
)

// Child-process roles, chosen by environment variable: the test binary
// re-executes itself to be the process that dies or that is refused.
const (
	envWriter = "RAFTSTORE_TEST_CHILD_WRITER"
	envOpener = "RAFTSTORE_TEST_CHILD_OPENER"
	exitHeld  = 3
)

func TestMain(m *testing.M) {
	if path := os.Getenv(envWriter); path != "" {
		os.Exit(runWriter(path))
	}
	if path := os.Getenv(envOpener); path != "" {
		os.Exit(runOpener(path))
	}
	os.Exit(m.Run())
}

// entryData is a function of (index, term), so the parent can tell a torn
// or misplaced entry from a whole one; sizes vary up to a few pages.
func entryData(index, term uint64) []byte {
	seed := sha256.Sum256(binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, index), term))
	n := int(binary.BigEndian.Uint16(seed[:]) % 9000)
	return bytes.Repeat(seed[:], n/32+1)[:n]
}

// runWriter plays a raft node's Ready loop forever: a new term per run,
// appends, conflicting suffixes, snapshots and compactions, each Ready one
// Save, printing "ok <commit>" after each Save returns. The parent kills it.
func runWriter(path string) int {
	s, err := Open(path, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	hs := s.HardState()
	term, commit := hs.GetTerm()+1, hs.GetCommit()
	rng := rand.New(rand.NewPCG(term, commit))
	for {
		last, _ := s.LastIndex()
		at := last + 1
		if last > commit+2 && rng.IntN(4) == 0 {
			at = commit + 1 + uint64(rng.IntN(int(last-commit))) // overwrite an uncommitted suffix
		}
		batch := make([]*pb.Entry, 1+rng.IntN(4))
		for i := range batch {
			idx := at + uint64(i)
			batch[i] = &pb.Entry{Index: new(idx), Term: new(term), Type: pb.EntryNormal.Enum(), Data: entryData(idx, term)}
		}
		if end := at + uint64(len(batch)) - 1; end > commit+3 {
			commit = end - 3
		}
		if err := s.Save(hardState(term, 1, commit), batch, nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("ok %d\n", commit)
		if snapIdx, _ := s.FirstIndex(); commit > snapIdx+20 && rng.IntN(8) == 0 {
			if _, err := s.CreateSnapshot(commit, &pb.ConfState{Voters: []uint64{1}}, entryData(commit, 0)); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			if err := s.Compact(commit - 5); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
	}
}

func runOpener(path string) int {
	s, err := Open(path, Options{LockTimeout: 200 * time.Millisecond})
	if errors.Is(err, ErrLocked) {
		fmt.Println(err)
		return exitHeld
	}
	if err != nil {
		fmt.Println(err)
		return 1
	}
	s.Close()
	return 0
}

// TestCrashBetweenReadies kills a writer process with SIGKILL at random
// points, many times over one file, and checks after each death that the
// store opens, holds every Ready the writer was told was saved, commits no
// entry it does not hold, and holds only whole entries in order.
func TestCrashBetweenReadies(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 12 {
		acked := crashWriter(t, path, 1+rng.IntN(150))
		s, err := Open(path, Options{})
		if err != nil {
			t.Fatalf("round %d: reopen after SIGKILL: %v", round, err)
		}
		checkRecovered(t, s, acked)
		s.Close()
	}
}

// crashWriter runs the writer until it has acknowledged n Saves, kills it
// with SIGKILL, and returns the last commit it acknowledged.
func crashWriter(t *testing.T, path string, n int) (acked uint64) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envWriter+"="+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	for i := 0; i < n && lines.Scan(); i++ {
		if _, err := fmt.Sscanf(lines.Text(), "ok %d", &acked); err != nil {
			t.Fatalf("writer said %q", lines.Text())
		}
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no deferred code, no flush
		t.Fatal(err)
	}
	cmd.Wait()
	if strings.TrimSpace(stderr.String()) != "" {
		t.Fatalf("writer failed: %s", stderr.String())
	}
	return acked
}

func checkRecovered(t *testing.T, s *Store, acked uint64) {
	t.Helper()
	hs, _, _ := s.InitialState()
	last, _ := s.LastIndex()
	if hs.GetCommit() < acked {
		t.Fatalf("an acknowledged Save was lost: commit %d < acknowledged %d", hs.GetCommit(), acked)
	}
	if hs.GetCommit() > last {
		t.Fatalf("HardState commits %d beyond the last entry %d", hs.GetCommit(), last)
	}
	first, _ := s.FirstIndex()
	for i, e := range logOf(t, s) {
		if e.GetIndex() != first+uint64(i) || e.GetTerm() > hs.GetTerm() || !bytes.Equal(e.GetData(), entryData(e.GetIndex(), e.GetTerm())) {
			t.Fatalf("entry %d is torn or misplaced (term %d, %d bytes)", e.GetIndex(), e.GetTerm(), len(e.GetData()))
		}
	}
	if snap, _ := s.Snapshot(); snap.GetMetadata().GetIndex() > 0 && !bytes.Equal(snap.GetData(), entryData(snap.GetMetadata().GetIndex(), 0)) {
		t.Fatalf("snapshot at %d is torn", snap.GetMetadata().GetIndex())
	}
}

// TestSecondProcessRefused: another process cannot open a held store; it is
// refused naming the file.
func TestSecondProcessRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envOpener+"="+path)
	out, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitHeld || !strings.Contains(string(out), path) {
		t.Fatalf("second process: %v, output %q; want exit %d naming %s", err, out, exitHeld, path)
	}
}
