package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/buildfleet/buildfleet/internal/pace/procstatus"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// daemon is the server under attack: started here (proc set) or already running.
type daemon struct {
	target, addr, metrics, password string
	proc                            *exec.Cmd
	dir                             string
}

var (
	kvReady   = regexp.MustCompile(`pace-kv ready.* listen=(\S+) metrics=(\S+)`)
	nodeReady = regexp.MustCompile(`pace-node ready: .* node-port=(\S+) `)
)

func startDaemon(c config) (*daemon, error) {
	if c.target != "kv" && c.target != "node" {
		return nil, fmt.Errorf("-target=%q: want kv or node", c.target)
	}
	d := &daemon{target: c.target, addr: c.addr, metrics: c.metrics, password: c.password}
	if c.addr != "" {
		return d, nil
	}
	dir, err := os.MkdirTemp("", "hostile-")
	if err != nil {
		return nil, err
	}
	d.dir = dir
	bin, err := binary(c, dir)
	if err == nil {
		err = d.launch(bin)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return d, nil
}

// binary is -bin, or bin/pace-<target>, built into dir when it is not there.
func binary(c config, dir string) (string, error) {
	bin := c.bin
	if bin == "" {
		bin = filepath.Join("bin", "pace-"+c.target)
	}
	if _, err := os.Stat(bin); err == nil || c.bin != "" {
		return bin, err
	}
	bin = filepath.Join(dir, "pace-"+c.target)
	build := exec.Command("go", "build", "-o", bin, "./cmd/pace-"+c.target)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building pace-%s: %w\n%s", c.target, err, out)
	}
	return bin, nil
}

// launch starts the daemon with small budgets (64 MiB memory tier, 256 MiB in flight) so the
// big STOREs press on them, and waits for its ready line.
func (d *daemon) launch(bin string) error {
	var args []string
	ready := kvReady
	if d.target == "kv" {
		d.password = "soak-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		pw := filepath.Join(d.dir, "pw")
		if err := os.WriteFile(pw, []byte(d.password+"\n"), 0o600); err != nil {
			return err
		}
		args = []string{"--listen=127.0.0.1:0", "--metrics=127.0.0.1:0", "--requirepass-file=" + pw,
			"--max-memory=64MiB", "--max-inflight=256MiB"}
	} else {
		ports, err := freePorts(3)
		if err != nil {
			return err
		}
		d.metrics = "127.0.0.1:" + ports[2]
		args = []string{"--listen-node=" + ports[0], "--listen-raft=" + ports[1], "--admin-listen=" + ports[2],
			"--cluster-dir=" + filepath.Join(d.dir, "state"), "--discovery=off", "--slots=0",
			"--cache-memory=64MiB", "--max-inflight=256MiB"}
		ready = nodeReady
	}
	d.proc = exec.Command(bin, args...)
	return d.waitReady(ready)
}

func (d *daemon) waitReady(ready *regexp.Regexp) error {
	stderr, err := d.proc.StderrPipe()
	if err != nil {
		return err
	}
	if err := d.proc.Start(); err != nil {
		return err
	}
	found := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := ready.FindStringSubmatch(sc.Text()); m != nil {
				found <- m
			}
		}
	}()
	select {
	case m := <-found:
		d.addr = m[1]
		if d.target == "kv" {
			d.metrics = m[2]
		} else {
			d.addr = "127.0.0.1" + m[1][strings.LastIndex(m[1], ":"):]
		}
		return nil
	case <-time.After(30 * time.Second):
		d.proc.Process.Kill()
		return errors.New("the daemon printed no ready line in 30s")
	}
}

func freePorts(n int) ([]string, error) {
	var ports []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		_, port, _ := net.SplitHostPort(l.Addr().String())
		ports = append(ports, port)
	}
	return ports, nil
}

func (d *daemon) stop() {
	if d.proc != nil {
		d.proc.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { d.proc.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			d.proc.Process.Kill()
		}
	}
	if d.dir != "" {
		os.RemoveAll(d.dir)
	}
}

// watchRSS samples the daemon's resident memory every 100 ms until ctx ends and sends the
// highest (0 when the daemon is not ours).
func (d *daemon) watchRSS(ctx context.Context) <-chan int64 {
	out := make(chan int64, 1)
	go func() {
		var peak int64
		for ctx.Err() == nil {
			if d.proc != nil {
				peak = max(peak, rssBytes(d.proc.Process.Pid))
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
		out <- peak
	}()
	return out
}

func rssBytes(pid int) int64 {
	kib, _ := procstatus.KiB(pid, "VmRSS") // a process gone reads as 0
	return kib << 10
}

// counters are the daemon's own account of the attack, from /metrics.
func (d *daemon) counters() string {
	if d.metrics == "" {
		return "counters: no /metrics"
	}
	resp, err := http.Get("http://" + d.metrics + "/metrics")
	if err != nil {
		return "counters: " + err.Error()
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return "counters: " + err.Error()
	}
	var b strings.Builder
	b.WriteString("counters:")
	for _, name := range counterNames[d.target] {
		for _, m := range families[name].GetMetric() {
			b.WriteString(" " + strings.TrimPrefix(name, "pace_"))
			for _, l := range m.GetLabel() {
				b.WriteString("{" + l.GetName() + "=" + l.GetValue() + "}")
			}
			fmt.Fprintf(&b, "=%g", m.GetCounter().GetValue()+m.GetGauge().GetValue())
		}
	}
	return b.String()
}

var counterNames = map[string][]string{
	"kv": {"pace_connections_total", "pace_connections_rejected_total", "pace_connections_rejected_per_address_total",
		"pace_connections_closed_total", "pace_cache_frames_refused_endpoint_busy_total",
		"pace_cache_credentials_rejected_total", "pace_cache_auth_throttled_total", "pace_cache_auth_connections_closed_total"},
	"node": {"pace_node_frame_connections_total", "pace_node_frame_connections_refused_at_capacity_total",
		"pace_node_frame_connections_refused_per_address_total", "pace_node_frame_connections_closed_total",
		"pace_node_frame_frames_refused_total", "pace_node_cache_requests_refused_not_local_total"},
}
