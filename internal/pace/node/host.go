package node

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/buildfleet/buildfleet/internal/pace/worker"
)

// meminfo reads one field of /proc/meminfo in bytes; 0 when unknown.
func meminfo(field string) uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}

// MemoryTotal is this machine's memory in bytes, 0 when unknown.
func MemoryTotal() uint64 { return meminfo("MemTotal") }

func memAvailable() uint64 { return meminfo("MemAvailable") }

func hostFacts(tierResident uint64) worker.Host {
	return worker.Host{LogicalCores: runtime.NumCPU(), MemoryTotal: MemoryTotal(), TierResident: tierResident}
}
