package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
	"github.com/buildfleet/buildfleet/internal/gradient/nixexec/nixexectest"
)

// workerBin is gradient-worker, built once for the package's tests.
var workerBin string

func TestMain(m *testing.M) {
	if os.Getenv("GRADIENT_SERVER_AS_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	cleanupNix, err := nixexectest.UseProjectConfig()
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "gradient-server-test-")
	if err != nil {
		panic(err)
	}
	workerBin = filepath.Join(dir, "gradient-worker")
	build := exec.Command("go", "build", "-o", workerBin, "../gradient-worker")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building gradient-worker: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	cleanupNix()
	os.Exit(code)
}

// logBuffer collects a child's stderr for failure messages and waits.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// proc is a child process (the server or a worker) with its log.
type proc struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	log  *logBuffer
	done chan struct{}
}

func startProc(t *testing.T, name string, cmd *exec.Cmd) *proc {
	t.Helper()
	p := &proc{t: t, name: name, cmd: cmd, log: &logBuffer{}, done: make(chan struct{})}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		io.Copy(p.log, bufio.NewReader(stderr))
		cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.kill() })
	return p
}

// waitLog waits until the log matches re.
func (p *proc) waitLog(re string, within time.Duration) string {
	p.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if m := rx.FindString(p.log.String()); m != "" {
			return m
		}
		select {
		case <-p.done:
			p.t.Fatalf("%s exited before logging %q:\n%s", p.name, re, p.log)
		case <-time.After(50 * time.Millisecond):
		}
	}
	p.t.Fatalf("%s never logged %q:\n%s", p.name, re, p.log)
	return ""
}

// kill is kill -9.
func (p *proc) kill() {
	if p.cmd.Process != nil {
		p.cmd.Process.Kill()
	}
	<-p.done
}

// stop is SIGTERM, then waits.
func (p *proc) stop() {
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.kill()
	}
}

// serverProc is a gradient-server child on a fixed loopback address.
type serverProc struct {
	*proc
	addr, dataDir string
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func serverCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "GRADIENT_SERVER_AS_MAIN=1")
	return cmd
}

func startServer(t *testing.T, addr, dataDir string, flags ...string) *serverProc {
	t.Helper()
	args := append([]string{"--listen=" + addr, "--data-dir=" + dataDir}, flags...)
	s := &serverProc{proc: startProc(t, "gradient-server", serverCmd(args...)), addr: addr, dataDir: dataDir}
	s.waitLog(`gradient-server ready`, 30*time.Second)
	return s
}

func (s *serverProc) protoURL() string { return "ws://" + s.addr + "/proto" }

// bootstrapKey creates the first API key on a data directory and returns it (for the admin
// commands) with a client using it.
func bootstrapKey(t *testing.T, addr, dataDir string) (string, *apiclient.Client) {
	t.Helper()
	out, err := serverCmd("admin", "bootstrap", "--data-dir="+dataDir, "--json").Output()
	if err != nil {
		t.Fatalf("admin bootstrap: %v", err)
	}
	var resp api.CreateAPIKeyResponse
	if err := json.Unmarshal(out, &resp); err != nil || !strings.HasPrefix(resp.Key, "GRAD") {
		t.Fatalf("bootstrap output %q: %v", out, err)
	}
	c, err := apiclient.New("http://"+addr, resp.Key)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Key, c
}

// bootstrap creates the first API key on a data directory and returns a client using it.
func bootstrap(t *testing.T, addr, dataDir string) *apiclient.Client {
	t.Helper()
	_, c := bootstrapKey(t, addr, dataDir)
	return c
}

// startWorker runs gradient-worker with its own base directory and peers file, and env added
// to the test's environment.
func startWorker(t *testing.T, s *serverProc, id, baseDir, peersLine string, env ...string) *proc {
	t.Helper()
	peers := filepath.Join(baseDir, "peers")
	if err := os.MkdirAll(baseDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(peers, []byte(peersLine+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(workerBin, "--server="+s.protoURL(), "--base-dir="+baseDir, "--peers-file="+peers, "--log-level=debug")
	cmd.Env = append(append(os.Environ(), "GRADIENT_WORKER_ID="+id), env...)
	return startProc(t, "gradient-worker", cmd)
}

func newWorkerID(t *testing.T) string {
	id, err := uuid.NewV7()
	if err != nil {
		t.Fatal(err)
	}
	return id.String()
}

// waitFor polls cond until it holds.
func waitFor(t *testing.T, what string, within time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	last := ""
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s; last state: %s", what, last)
}

var bg = context.Background()

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(bg, d)
}
