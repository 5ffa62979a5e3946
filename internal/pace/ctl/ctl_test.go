package ctl

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/kv"
)

func TestCacheVerbsAgainstARealPaceKV(t *testing.T) {
	srv, err := kv.New(kv.Config{Listen: "127.0.0.1:0", MaxMemory: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}()
	addr := "--addr=" + srv.Addr().String()
	file := filepath.Join(t.TempDir(), "obj")
	os.WriteFile(file, []byte("hello object"), 0o644)
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := Run(context.Background(), append([]string{addr}, args...), &out)
		return out.String(), err
	}
	if out, err := run("cache-store", "k", file); err != nil || !strings.Contains(out, "stored k (12 bytes)") {
		t.Fatalf("store: %q %v", out, err)
	}
	if out, err := run("cache-fetch", "k"); err != nil || out != "hello object" {
		t.Fatalf("fetch: %q %v", out, err)
	}
	if out, err := run("cache-drop", "k"); err != nil || !strings.Contains(out, "dropped k") {
		t.Fatalf("drop: %q %v", out, err)
	}
	if _, err := run("cache-fetch", "k"); err == nil || !strings.Contains(err.Error(), "miss") {
		t.Fatalf("fetch after drop: %v", err)
	}
	if _, err := run("bogus"); !errors.Is(err, ErrUsage) {
		t.Fatalf("bogus verb: %v", err)
	}
}
