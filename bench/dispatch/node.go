package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// run builds what it measures and runs the parts -only leaves.
func (b *bench) run() error {
	redis, err := corpusFile("redis_7.0.15.orig.tar.gz")
	if err != nil {
		return err
	}
	if redis == "" && b.c.only != "lease" {
		fmt.Println("bench-dispatch: skipping the per-TU part: it builds Redis; put redis_7.0.15.orig.tar.gz in a directory and name it in PACE_CORPUS (testdata/corpus/README.md)")
		if b.c.only == "tu" {
			return nil
		}
		b.c.only = "lease"
	}
	if err := run("go", "build", "-o", "bin/", "./cmd/pace-node", "./cmd/pace-cc", "./cmd/pace-cc-full"); err != nil {
		return err
	}
	if err := run("go", "build", "-o", b.leaseload, "./bench/leaseload"); err != nil {
		return err
	}
	gcc, _ := output(nil, "gcc", "--version")
	fmt.Printf("pace-node dispatch on %d cores, %s (%s)\n", runtime.NumCPU(), cpuModel(), strings.SplitN(gcc, "\n", 2)[0])
	if b.c.only != "tu" {
		if err := b.leasePart(); err != nil {
			return err
		}
	}
	if b.c.only != "lease" {
		if err := b.tuPart(redis); err != nil {
			return err
		}
	}
	if b.c.only != "tu" {
		fmt.Printf("\nLEASE+RELEASE goal (>= 20000/s, %d clients): persistent connections %s; fresh connection per verb %s\n",
			b.c.conns, verdict(b.bestRates[0]), verdict(b.bestRates[1]))
	}
	return nil
}

func verdict(rate int) string {
	if rate >= 20000 {
		return fmt.Sprintf("met (%d/s)", rate)
	}
	return fmt.Sprintf("NOT met (%d/s)", rate)
}

// run runs a command with this program's stdout and stderr.
func run(name string, args ...string) error {
	cmd := command(name, args...)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

func cpuModel() string {
	data, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown processor"
}

// node is a pace-node on loopback with its state in the work directory.
type node struct {
	p           *proc
	addr, admin string
	log         string
}

// startNode starts a pace-node named name with extra flags and returns once its worker has
// registered with its scheduler.
func (b *bench) startNode(name string, flags ...string) (*node, error) {
	n := &node{log: filepath.Join(b.work, name+".log")}
	args := append([]string{"--cluster-dir=" + filepath.Join(b.work, name), "--listen-node=127.0.0.1:0",
		"--listen-raft=127.0.0.1:0", "--admin-listen=127.0.0.1:0", "--toolchain=gcc", "--discovery=off"}, flags...)
	p, err := b.start(n.log, "bin/pace-node", args...)
	if err != nil {
		return nil, err
	}
	n.p = p
	ready, err := waitReady(n.log, "pace-node ready", p)
	if err != nil {
		return nil, err
	}
	n.addr, n.admin = field(ready, "node-port"), field(ready, "admin")
	for range 300 {
		if v, err := n.metric("pace_dispatch_worker_registrations_total"); err == nil && v >= 1 {
			return n, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	data, _ := os.ReadFile(n.log)
	return nil, fmt.Errorf("pace-node %s: no worker registered\n%s", name, data)
}

// families reads the node's /metrics through the Prometheus text parser.
func (n *node) families() (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get("http://" + n.admin + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// metric is the value of one of the node's unlabelled counters, truncated to an integer.
func (n *node) metric(name string) (int64, error) {
	fams, err := n.families()
	if err != nil {
		return 0, err
	}
	return familyValue(fams[name]), nil
}

func familyValue(f *dto.MetricFamily) int64 {
	var v float64
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) == 0 {
			v = m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return int64(v)
}

// leaseRefusals are the LEASE and RELEASE refusal counters (unknown-lease is counted only when
// the token is not the cluster's: none here).
var leaseRefusals = regexp.MustCompile(`^pace_dispatch_leases_(all_excluded|duplicate|field_too_long|malformed|no_capacity|no_worker|withdrawn|unauthorized|released_late)_total$`)

// leaseCounters are the node's granted and released totals and its LEASE/RELEASE refusals.
func (n *node) leaseCounters() (granted, released, refused int64, err error) {
	fams, err := n.families()
	if err != nil {
		return 0, 0, 0, err
	}
	for name, f := range fams {
		if leaseRefusals.MatchString(name) {
			refused += familyValue(f)
		}
	}
	return familyValue(fams["pace_dispatch_leases_granted_total"]), familyValue(fams["pace_dispatch_leases_released_total"]), refused, nil
}
