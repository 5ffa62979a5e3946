package ccstats

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestAppendAndFold(t *testing.T) {
	dir := t.TempDir()
	recs := []Record{
		{Outcome: Hit, Via: "direct", TotalMS: 2},
		{Outcome: Hit, Via: "preprocessed", TotalMS: 8},
		{Outcome: Hit, Via: "listing", TotalMS: 3},
		{Outcome: Miss, TotalMS: 100},
		{Outcome: Uncacheable, Reason: "__TIME__ in source"},
		{Outcome: Passthrough, Reason: "link"},
		{Outcome: Unavailable},
	}
	for _, r := range recs {
		if err := Append(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Invocations != 7 || s.Hits != 3 || s.HitsDirect != 1 || s.HitsPrepro != 1 || s.HitsListing != 1 || s.Misses != 1 || s.Uncacheable != 1 || s.Unavailable != 1 {
		t.Fatalf("summary %+v", s)
	}
	if s.Reasons["uncacheable: __TIME__ in source"] != 1 {
		t.Fatalf("reasons %v", s.Reasons)
	}
	var out bytes.Buffer
	s.Write(&out)
	for _, want := range []string{"cache hits", "75.0%", "via direct mode", "dependency listings", "hit latency", "__TIME__"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestZeroRemovesTheLog(t *testing.T) {
	dir := t.TempDir()
	_ = Append(dir, Record{Outcome: Miss})
	if err := Zero(dir); err != nil {
		t.Fatal(err)
	}
	if s, _ := Read(dir); s.Invocations != 0 {
		t.Fatalf("log survived zeroing: %+v", s)
	}
	if err := Zero(dir); err != nil {
		t.Fatalf("zeroing an absent log: %v", err)
	}
}

func TestAppendCreatesTheDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := Append(dir, Record{Outcome: Hit}); err != nil {
		t.Fatal(err)
	}
	if s, _ := Read(dir); s.Hits != 1 {
		t.Fatal("record lost")
	}
}

// TestConcurrentProcessesWriteWholeLines has many processes append at once (re-executing this
// test binary) and checks every line parses and none is lost.
func TestConcurrentProcessesWriteWholeLines(t *testing.T) {
	if dir := os.Getenv("CCSTATS_CHILD_DIR"); dir != "" {
		for i := 0; i < 50; i++ {
			_ = Append(dir, Record{Outcome: Miss, Source: strings.Repeat("x", 300) + strconv.Itoa(i)})
		}
		return
	}
	dir := t.TempDir()
	var wg sync.WaitGroup
	const procs = 16
	for i := 0; i < procs; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentProcessesWriteWholeLines$")
			cmd.Env = append(os.Environ(), "CCSTATS_CHILD_DIR="+dir)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("child: %v\n%s", err, out)
			}
		}()
	}
	wg.Wait()
	s, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Unreadable != 0 || s.Misses != procs*50 {
		t.Fatalf("misses %d (want %d), unreadable %d", s.Misses, procs*50, s.Unreadable)
	}
}

func TestDir(t *testing.T) {
	env := map[string]string{"HOME": "/home/u"}
	if d := Dir(func(k string) string { return env[k] }); d != "/home/u/.local/state/pace-cc" {
		t.Errorf("Dir = %q", d)
	}
	env["XDG_STATE_HOME"] = "/x"
	if d := Dir(func(k string) string { return env[k] }); d != "/x/pace-cc" {
		t.Errorf("Dir = %q", d)
	}
	if d := Dir(func(string) string { return "" }); d != "" {
		t.Errorf("Dir = %q", d)
	}
}
