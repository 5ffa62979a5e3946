package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// server is the gradient-server child under test.
type server struct {
	cmd                *exec.Cmd
	dir                string
	addr, metrics, key string
	api                *apiclient.Client
	exited             chan struct{}
}

// startServer builds gradient-server when no binary is given, bootstraps an API key on a fresh
// data directory and starts the server on free loopback ports.
func startServer(ctx context.Context, bin string, extra []string) (*server, error) {
	dir, err := os.MkdirTemp("", "hostilegradient-")
	if err != nil {
		return nil, err
	}
	s := &server{dir: dir, exited: make(chan struct{})}
	if bin == "" {
		bin = filepath.Join(dir, "gradient-server")
		if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/gradient-server").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("building gradient-server (run from the repository root, or pass -server-bin): %v\n%s", err, out)
		}
	}
	data := filepath.Join(dir, "data")
	out, err := exec.CommandContext(ctx, bin, "admin", "bootstrap", "--data-dir="+data, "--json").Output()
	var key api.CreateAPIKeyResponse
	if err == nil {
		err = json.Unmarshal(out, &key)
	}
	if err != nil {
		return nil, fmt.Errorf("admin bootstrap: %w", err)
	}
	s.key, s.addr, s.metrics = key.Key, freeAddr(), freeAddr()
	args := append([]string{"--listen=" + s.addr, "--metrics=" + s.metrics, "--data-dir=" + data, "--log-level=warn"}, extra...)
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stderr = io.Discard
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.cmd.Wait(); close(s.exited) }()
	if s.api, err = apiclient.New("http://"+s.addr, s.key); err != nil {
		s.stop()
		return nil, err
	}
	return s, s.waitReady(ctx)
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func (s *server) waitReady(ctx context.Context) error {
	for range 300 {
		if resp, err := http.Get("http://" + s.addr + "/healthz"); err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("gradient-server exited at start")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("gradient-server did not answer /healthz")
}

func (s *server) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			s.cmd.Process.Kill()
			<-s.exited
		}
	}
	os.RemoveAll(s.dir)
}

func (s *server) protoURL() string { return "ws://" + s.addr + "/proto" }

// fixture is a worker registered on a project that has a cache.
type fixture struct {
	project string
	workers []worker
}

type worker struct {
	id    string
	token wire.PeerToken
}

// fixtures creates a project subscribed to a cache and n registered workers.
func (s *server) fixtures(ctx context.Context, n int) (fixture, error) {
	cache, err := s.api.CreateCache(ctx, api.CreateCacheRequest{Name: "soak"})
	if err != nil {
		return fixture{}, err
	}
	p, err := s.api.CreateProject(ctx, api.CreateProjectRequest{Name: "soak", RepoURL: "file:///nowhere", Branch: "main", Wildcards: []string{"packages"}})
	if err == nil {
		err = s.api.Subscribe(ctx, p.ID, cache.ID)
	}
	if err != nil {
		return fixture{}, err
	}
	f := fixture{project: p.ID}
	for range n {
		id := uuid.NewString()
		reg, err := s.api.RegisterWorker(ctx, apiclient.Peer{Kind: apiclient.ProjectPeer, Ref: p.ID}, api.RegisterWorkerRequest{WorkerID: id})
		if err != nil {
			return fixture{}, err
		}
		f.workers = append(f.workers, worker{id: id, token: wire.PeerToken{PeerID: p.ID, Token: reg.Token}})
	}
	return f, nil
}

// sample is what the server holds at one moment.
type sample struct {
	fds        int
	rssKiB     int
	goroutines int
	metrics    map[string]float64
}

// max is the larger of each figure.
func (a sample) max(b sample) sample {
	a.fds, a.rssKiB, a.goroutines = max(a.fds, b.fds), max(a.rssKiB, b.rssKiB), max(a.goroutines, b.goroutines)
	return a
}

func (s *server) sample() sample {
	pid := s.cmd.Process.Pid
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	out := sample{fds: len(ents), metrics: s.scrape()}
	out.goroutines = int(out.metrics["go_goroutines"])
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			out.rssKiB, _ = strconv.Atoi(strings.Fields(v)[0])
		}
	}
	return out
}

// scrape reads every unlabelled series and every labelled one as name{labels}.
func (s *server) scrape() map[string]float64 {
	out := map[string]float64{}
	resp, err := http.Get("http://" + s.metrics + "/metrics")
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		if strings.HasPrefix(line, "#") || i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out
}
