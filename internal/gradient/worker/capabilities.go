package worker

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// capabilitiesCache keeps the nix configuration read at the first session: it does not
// change while the worker runs.
type capabilitiesCache struct {
	mu   sync.Mutex
	caps *wire.WorkerCapabilities
	cpu  cpuSample
}

// capabilities is WorkerCapabilities (gradient-protocol §5): architectures are the nix
// system and its extra platforms, features the nix system-features, each replaced by the
// configured list when one is set.
func (w *Worker) capabilities(ctx context.Context) (*wire.WorkerCapabilities, error) {
	w.caps.mu.Lock()
	defer w.caps.mu.Unlock()
	if w.caps.caps != nil {
		return w.caps.caps, nil
	}
	c := &wire.WorkerCapabilities{
		Architectures:       w.cfg.Architectures,
		SystemFeatures:      w.cfg.SystemFeatures,
		MaxConcurrentBuilds: uint32(w.cfg.MaxConcurrentBuilds),
		CPUCount:            uint32(runtime.NumCPU()),
		RAMTotalMB:          memInfo("MemTotal") >> 10,
	}
	var err error
	if c.Architectures == nil || c.SystemFeatures == nil {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		cfg, cerr := w.nix.ShowConfig(cctx)
		if cerr != nil {
			err = cerr
			if c.Architectures == nil {
				c.Architectures = []string{hostSystem()}
			}
		} else {
			if c.Architectures == nil {
				c.Architectures = cfg.Systems()
			}
			if c.SystemFeatures == nil {
				c.SystemFeatures = cfg.SystemFeatures
			}
		}
	}
	if err == nil {
		w.caps.caps = c
	}
	return c, err
}

// hostSystem is Nix's name for this machine when nix cannot be asked: arch-os.
func hostSystem() string {
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64", "386": "i686"}[runtime.GOARCH]
	if arch == "" {
		arch = runtime.GOARCH
	}
	return arch + "-" + strings.Replace(runtime.GOOS, "macos", "darwin", 1)
}

// metrics is the 10 s WorkerMetrics heartbeat: CPU use since the last heartbeat and free
// memory, from /proc (zero where /proc is missing).
func (w *Worker) metrics() *wire.WorkerMetrics {
	w.caps.mu.Lock()
	defer w.caps.mu.Unlock()
	return &wire.WorkerMetrics{CPUUsagePct: w.caps.cpu.usage(), RAMFreeMB: memInfo("MemAvailable") >> 10}
}

// cpuSample is the last reading of /proc/stat's cpu line.
type cpuSample struct{ busy, total uint64 }

func (c *cpuSample) usage() float32 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) < 5 || fields[0] != "cpu" {
		return 0
	}
	var total, idle uint64
	for i, f := range fields[1:] {
		v, _ := strconv.ParseUint(f, 10, 64)
		total += v
		if i == 3 || i == 4 { // idle and iowait
			idle += v
		}
	}
	busy := total - idle
	prev := *c
	*c = cpuSample{busy: busy, total: total}
	if prev.total == 0 || total <= prev.total {
		return 0
	}
	return float32(busy-prev.busy) * 100 / float32(total-prev.total)
}

// memInfo reads one /proc/meminfo field, in KiB.
func memInfo(field string) uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if ok && name == field {
			v, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return v
		}
	}
	return 0
}
