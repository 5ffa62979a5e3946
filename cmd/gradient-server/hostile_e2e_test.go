package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
	"github.com/buildfleet/buildfleet/internal/gradient/hostiletest"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// hostileServer is a real gradient-server with /metrics, a project subscribed to a cache, and
// an API client.
type hostileServer struct {
	*serverProc
	api         *apiclient.Client
	metricsAddr string
	project     api.Project
}

func startHostileServer(t *testing.T, flags ...string) *hostileServer {
	t.Helper()
	dataDir, addr := t.TempDir(), freeAddr(t)
	h := &hostileServer{metricsAddr: freeAddr(t)}
	_, h.api = bootstrapKey(t, addr, dataDir)
	h.serverProc = startServer(t, addr, dataDir, append([]string{"--metrics=" + h.metricsAddr}, flags...)...)
	cache, err := h.api.CreateCache(bg, api.CreateCacheRequest{Name: "main"})
	if err != nil {
		t.Fatal(err)
	}
	h.project, err = h.api.CreateProject(bg, api.CreateProjectRequest{Name: "hostile", RepoURL: "file:///nowhere", Branch: "main", Wildcards: []string{"packages"}})
	if err == nil {
		err = h.api.Subscribe(bg, h.project.ID, cache.ID)
	}
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// metric reads one unlabelled series from the server's /metrics.
func (h *hostileServer) metric(t *testing.T, name string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + h.metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("no %s on /metrics", name)
	return 0
}

// fds counts the server process's open descriptors.
func (h *hostileServer) fds(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", h.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// closeWaits counts the server port's sockets in CLOSE-WAIT (the peer left, the server never
// closed its side), from /proc/net/tcp.
func (h *hostileServer) closeWaits(t *testing.T) int {
	t.Helper()
	_, port, _ := net.SplitHostPort(h.addr)
	p, _ := strconv.Atoi(port)
	local := fmt.Sprintf(":%04X", p)
	data, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 3 && strings.HasSuffix(f[1], local) && f[3] == "08" {
			n++
		}
	}
	return n
}

// register makes n worker registrations on the project and returns their tokens by ID.
func (h *hostileServer) register(t *testing.T, n int) map[string]string {
	t.Helper()
	out := map[string]string{}
	for range n {
		id := newWorkerID(t)
		reg, err := h.api.RegisterWorker(bg, apiclient.Peer{Kind: apiclient.ProjectPeer, Ref: h.project.ID}, api.RegisterWorkerRequest{WorkerID: id})
		if err != nil {
			t.Fatal(err)
		}
		out[id] = reg.Token
	}
	return out
}

// Finding 5 of the hostile-load probe: a worker that sends InitConnection again after its
// handshake gets Error 400 and its session closes, and 50 such sessions leave no goroutine,
// descriptor or CLOSE-WAIT socket behind. Before, each kept its socket half-closed, two
// goroutines and about 0.5 MB past the heartbeat timeout.
func TestViolatingSessionsLeaveNothingBehind(t *testing.T) {
	h := startHostileServer(t)
	workers := h.register(t, 51)
	violate := func(id string) {
		ctx, cancel := contextWithTimeout(20 * time.Second)
		defer cancel()
		o, err := hostiletest.Violate(ctx, h.protoURL(), id, wire.PeerToken{PeerID: h.project.ID, Token: workers[id]})
		if err != nil || o.Error == nil || o.Error.Code != 400 || o.Error.Message != "unexpected InitConnection" || o.Close != 1000 {
			t.Errorf("violating session %s: %v, %v; want Error 400 unexpected InitConnection and close 1000", id, o, err)
		}
	}
	ids := make([]string, 0, len(workers))
	for id := range workers {
		ids = append(ids, id)
	}
	violate(ids[0]) // the first session starts what lasts (database connections, pools)
	h.metric(t, "go_goroutines")
	time.Sleep(200 * time.Millisecond)
	goroutines, fds := h.metric(t, "go_goroutines"), h.fds(t)

	var wg sync.WaitGroup
	sem := make(chan struct{}, 10)
	for _, id := range ids[1:] {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			violate(id)
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	waitFor(t, "the sessions' goroutines and descriptors to be released", 10*time.Second, func() (bool, string) {
		g, f, cw := h.metric(t, "go_goroutines"), h.fds(t), h.closeWaits(t)
		state := fmt.Sprintf("goroutines %v (before %v), descriptors %d (before %d), CLOSE-WAIT %d", g, goroutines, f, fds, cw)
		return g <= goroutines+4 && f <= fds+2 && cw == 0, state
	})
	if v := h.metric(t, "gradient_protocol_violations_total"); v != 51 {
		t.Errorf("violations counted %v, want 51", v)
	}
}

// Finding 7: every malformed first message on /proto is answered Error 400 malformed message
// and a close, or closed by the socket layer at once (1003 for text, 1002 for a header over
// the handshake cap), never left to the 15 s handshake deadline; and each is logged with the
// address.
func TestMalformedFirstMessagesAreAnswered(t *testing.T) {
	h := startHostileServer(t)
	for _, fm := range hostiletest.FirstMessages() {
		t.Run(fm.Name, func(t *testing.T) {
			ctx, cancel := contextWithTimeout(10 * time.Second)
			defer cancel()
			o, err := fm.Run(ctx, h.protoURL(), "")
			if err != nil {
				t.Fatal(err)
			}
			if err := fm.Check(o); err != nil {
				t.Fatal(err)
			}
			if o.Elapsed > 2*time.Second {
				t.Fatalf("answered after %v, not at once", o.Elapsed)
			}
		})
	}
	h.waitLog(`malformed handshake message: answered Error 400 and closed.*remote=127\.0\.0\.1:`, 5*time.Second)
	h.waitLog(`text message before the session.*remote=127\.0\.0\.1:`, 5*time.Second)
	if v := h.metric(t, "gradient_handshakes_malformed_total"); v != 5 {
		t.Errorf("malformed handshakes counted %v, want 5", v)
	}
}

// Finding 6: idle keep-alive connections are closed after --http-idle-timeout.
func TestIdleKeepAlivesAreClosedAfterTheTimeout(t *testing.T) {
	h := startHostileServer(t, "--http-idle-timeout=500ms")
	var conns []net.Conn
	for range 20 {
		ctx, cancel := contextWithTimeout(5 * time.Second)
		c, err := hostiletest.IdleKeepAlive(ctx, h.addr, "127.0.0.2", "/healthz")
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	for _, c := range conns {
		if held, closed := hostiletest.WaitClosed(c, 3*time.Second); !closed || held > 2*time.Second {
			t.Fatalf("an idle keep-alive was held %v (closed %v), want about 500ms", held, closed)
		}
	}
}

// Finding 6 as the probe ran it: with the descriptor limit lowered to 300, 285 idle
// keep-alive connections from other addresses made accept fail with "too many open files" and
// every API call time out. Now the listener stops at three quarters of the limit, closes idle
// connections to make room, and an API call is served at once.
func TestAnAPICallIsServedWhileIdleConnectionsFillThePort(t *testing.T) {
	dataDir, addr := t.TempDir(), freeAddr(t)
	_, client := bootstrapKey(t, addr, dataDir)
	cmd := exec.Command("sh", "-c", `ulimit -n 300 && exec "$0" "$@"`, os.Args[0], "--listen="+addr, "--data-dir="+dataDir)
	cmd.Env = append(os.Environ(), "GRADIENT_SERVER_AS_MAIN=1")
	s := &serverProc{proc: startProc(t, "gradient-server", cmd), addr: addr, dataDir: dataDir}
	s.waitLog(`gradient-server ready.*max_http_connections=225`, 30*time.Second)

	for i := range 285 {
		ctx, cancel := contextWithTimeout(5 * time.Second)
		c, err := hostiletest.IdleKeepAlive(ctx, addr, fmt.Sprintf("127.0.0.%d", 2+i%5), "/healthz")
		cancel()
		if err != nil {
			t.Fatalf("idle connection %d: %v", i, err)
		}
		defer c.Close()
	}
	start := time.Now()
	ctx, cancel := contextWithTimeout(10 * time.Second)
	defer cancel()
	if _, err := client.ListProjects(ctx); err != nil {
		t.Fatalf("API call with 285 idle connections open: %v", err)
	}
	took := time.Since(start)
	t.Logf("API call served in %v with 285 idle keep-alives against a 300-descriptor limit", took)
	if took > time.Second {
		t.Fatalf("API call took %v", took)
	}
	if strings.Contains(s.log.String(), "too many open files") {
		t.Fatalf("the server ran out of descriptors:\n%s", s.log)
	}
}
