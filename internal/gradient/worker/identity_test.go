package worker

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
)

func noEnv(string) string { return "" }

func TestWorkerIDIsMintedOnceAndKept(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "base")
	id, err := LoadWorkerID(dir, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	u, err := uuid.Parse(id)
	if err != nil || u.Version() != 7 {
		t.Fatalf("minted %q: want a UUIDv7 (%v)", id, err)
	}
	again, err := LoadWorkerID(dir, noEnv)
	if err != nil || again != id {
		t.Fatalf("second start: %q, %v; want %q", again, err, id)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "worker-id"))
	if string(b) != id+"\n" {
		t.Fatalf("file holds %q", b)
	}
}

func TestWorkerIDFromTheEnvironmentWins(t *testing.T) {
	want := "0193a5c8-7f00-7000-8000-000000000001"
	got, err := LoadWorkerID(t.TempDir(), func(k string) string {
		if k == EnvWorkerID {
			return " " + want + " "
		}
		return ""
	})
	if err != nil || got != want {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestBadWorkerIDsAreRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "worker-id"), []byte("not-a-uuid\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadWorkerID(dir, noEnv); !errors.Is(err, ErrBadWorkerID) {
		t.Fatalf("file: err = %v", err)
	}
	if _, err := LoadWorkerID(t.TempDir(), func(string) string { return "nope" }); !errors.Is(err, ErrBadWorkerID) {
		t.Fatalf("env: err = %v", err)
	}
}

func TestBackoffDoublesAfterRefusalsAndResetsAfterService(t *testing.T) {
	var b Backoff
	steps := []struct {
		o    SessionOutcome
		want time.Duration
	}{
		{Refused, 1 * time.Second}, {Refused, 2 * time.Second}, {Drained, 4 * time.Second},
		{Refused, 8 * time.Second}, {Refused, 16 * time.Second}, {Refused, 32 * time.Second},
		{Refused, 60 * time.Second}, {Refused, 60 * time.Second},
		{Served, 1 * time.Second}, {Refused, 2 * time.Second}, {Served, 1 * time.Second},
	}
	for i, s := range steps {
		if got := b.After(s.o); got != s.want {
			t.Fatalf("step %d (%v): %v, want %v", i, s.o, got, s.want)
		}
	}
}
