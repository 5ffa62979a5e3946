package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/kvclient"
	"github.com/buildfleet/buildfleet/internal/pace/value"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// TestMain lets the test binary stand in for pace-kv: with PACE_KV_AS_MAIN set it runs main().
func TestMain(m *testing.M) {
	if os.Getenv("PACE_KV_AS_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type proc struct {
	cmd     *exec.Cmd
	addr    string
	metrics string // host:port of /metrics, or "off"
	done    chan error

	mu   sync.Mutex
	logs []string // stderr lines so far
}

var readyLine = regexp.MustCompile(`pace-kv ready.* listen=(\S+) metrics=(\S+)`)

// spawn starts pace-kv as a child process, metrics off, and waits for its ready line.
func spawn(t *testing.T, args ...string) *proc {
	t.Helper()
	return launch(t, append([]string{"--metrics="}, args...)...)
}

// launch starts pace-kv on a loopback port with args and waits for its ready line.
func launch(t *testing.T, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"--listen=127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "PACE_KV_AS_MAIN=1")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, done: make(chan error, 1)}
	found := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.logs = append(p.logs, sc.Text())
			p.mu.Unlock()
			if m := readyLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m
			}
		}
		p.done <- cmd.Wait()
	}()
	select {
	case m := <-found:
		p.addr, p.metrics = m[1], m[2]
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("pace-kv printed no ready line")
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return p
}

// logged counts the stderr lines so far that contain s.
func (p *proc) logged(s string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, l := range p.logs {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}

func valueFor(key string) []byte {
	obj := bytes.Repeat([]byte(key), 2048) // ~20 KiB, so a kill lands mid-write often
	b, _ := value.Encode(value.Value{Object: obj})
	return b
}

func TestKillDuringABurstOfStoresLeavesNoPartialValue(t *testing.T) {
	dir := t.TempDir()
	p := spawn(t, "--storage="+dir, "--max-memory=0")
	var mu sync.Mutex
	var acked []string
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				key := fmt.Sprintf("w%d-%06d", w, i)
				if kvclient.Store(ctx, kvclient.Options{Addr: p.addr}, key, kvclient.StoreArgs{}, valueFor(key)) == nil {
					mu.Lock()
					acked = append(acked, key)
					mu.Unlock()
				}
			}
		}(w)
	}
	time.Sleep(400 * time.Millisecond)
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	cancel()
	wg.Wait()
	if len(acked) == 0 {
		t.Fatal("no store acknowledged before the kill")
	}
	again := spawn(t, "--storage="+dir, "--max-memory=0")
	for _, key := range acked {
		got, hit, err := kvclient.Fetch(context.Background(), kvclient.Options{Addr: again.addr}, key)
		if err != nil || !hit || !bytes.Equal(got, valueFor(key)) {
			t.Fatalf("acknowledged %s lost or damaged after kill -9: hit=%v err=%v", key, hit, err)
		}
	}
	// Keys in flight at the kill are either absent or whole: probe the next few of each writer.
	for w := 0; w < 8; w++ {
		for i := 0; i < 4; i++ {
			key := fmt.Sprintf("w%d-%06d", w, len(acked)/8+i)
			got, hit, _ := kvclient.Fetch(context.Background(), kvclient.Options{Addr: again.addr}, key)
			if hit && !bytes.Equal(got, valueFor(key)) {
				t.Fatalf("partial value served for %s", key)
			}
		}
	}
	t.Logf("%d stores acknowledged before kill -9, all intact", len(acked))
}

func TestSIGTERMFinishesAndExitsZero(t *testing.T) {
	dir := t.TempDir()
	p := spawn(t, "--storage="+dir)
	if err := kvclient.Store(context.Background(), kvclient.Options{Addr: p.addr}, "k", kvclient.StoreArgs{}, valueFor("k")); err != nil {
		t.Fatal(err)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
	again := spawn(t, "--storage="+dir)
	if _, hit, err := kvclient.Fetch(context.Background(), kvclient.Options{Addr: again.addr}, "k"); !hit || err != nil {
		t.Fatalf("value lost across SIGTERM: %v %v", hit, err)
	}
}

func TestSIGHUPReloadsThePassword(t *testing.T) {
	pwFile := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(pwFile, []byte("first\n"), 0o600)
	p := spawn(t, "--requirepass-file="+pwFile)
	fetch := func(pw string) error {
		_, _, err := kvclient.Fetch(context.Background(), kvclient.Options{Addr: p.addr, Password: pw, Timeout: 5 * time.Second}, "k")
		return err
	}
	if err := fetch("first"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(pwFile, []byte("second\n"), 0o600)
	p.cmd.Process.Signal(syscall.SIGHUP)
	deadline := time.Now().Add(10 * time.Second)
	for fetch("second") != nil {
		if time.Now().After(deadline) {
			t.Fatal("new password not accepted after SIGHUP")
		}
		time.Sleep(50 * time.Millisecond)
	}
	var ae *kvclient.AuthError
	if err := fetch("first"); !errors.As(err, &ae) || ae.Refusal.Code != wire.CodeUnauthenticated {
		t.Fatalf("old password after reload: %v", err)
	}
}

func TestFlagErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{{"--max-disk=lots"}, {"--storage-sync=sometimes"}, {"stray"}} {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "PACE_KV_AS_MAIN=1")
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("%v: %v, want exit 2", args, err)
		}
	}
}
