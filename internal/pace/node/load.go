package node

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/buildfleet/buildfleet/internal/pace/store"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/worker"
)

// loadSampler reads the host facts a heartbeat carries (pace-node §6.1): how busy the CPU has
// been since the last heartbeat, available memory and free scratch space, so the scheduler
// withdraws a machine busy with work that is not the fleet's. A figure it cannot read is left
// absent, which the scheduler takes as unknown rather than idle.
//
// Several nodes on one host (tests, the demo) cannot tell their fleet's compiles from other
// work on a CPU they share: PACE_NODE_SHARED_CPU=1 leaves the CPU figure out, so the scheduler
// takes it as unknown rather than withdrawing every machine at once.
type loadSampler struct {
	mu          sync.Mutex
	sharedCPU   bool
	busy, all   uint64 // the last /proc/stat cpu line's busy and total jiffies
	readStat    func() ([]byte, error)
	readMem     func() uint64
	statScratch func(dir string) (uint64, bool)
}

func newLoadSampler() *loadSampler {
	return &loadSampler{readStat: func() ([]byte, error) { return os.ReadFile("/proc/stat") },
		readMem: memAvailable, statScratch: freeBytes, sharedCPU: os.Getenv("PACE_NODE_SHARED_CPU") == "1"}
}

// sample fills the host facts of a heartbeat's Load; scratch is the worker's scratch root.
func (s *loadSampler) sample(l *verbs.Load, scratch string) {
	if p, ok := s.cpuPermille(); ok && !s.sharedCPU {
		l.CPUBusyPermille = verbs.Some(p)
	}
	if avail := s.readMem(); avail > 0 {
		l.AvailableMemory = verbs.Some(avail)
	}
	if free, ok := s.statScratch(scratch); ok {
		l.FreeScratch = verbs.Some(free)
	}
}

// cpuPermille is the host's busy share since the previous call, 0..1000; false on the first
// call or when /proc/stat is unreadable.
func (s *loadSampler) cpuPermille() (uint32, bool) {
	b, err := s.readStat()
	if err != nil {
		return 0, false
	}
	busy, all, ok := parseCPULine(b)
	if !ok {
		return 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	prevBusy, prevAll := s.busy, s.all
	s.busy, s.all = busy, all
	if prevAll == 0 || all <= prevAll || busy < prevBusy {
		return 0, false
	}
	return uint32(min((busy-prevBusy)*1000/(all-prevAll), 1000)), true
}

// parseCPULine reads /proc/stat's first line: busy is everything but idle and iowait.
func parseCPULine(b []byte) (busy, all uint64, ok bool) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) < 5 || fields[0] != "cpu" {
		return 0, 0, false
	}
	var idle uint64
	for i, f := range fields[1:] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		all += v
		if i == 3 || i == 4 {
			idle += v
		}
	}
	return all - idle, all, true
}

// freeBytes is the space an unprivileged process may still write under dir.
func freeBytes(dir string) (uint64, bool) {
	if dir == "" {
		dir = os.TempDir()
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return st.Bavail * uint64(st.Bsize), true
}

// load is what this node is doing, as a heartbeat or an announcement carries it: the worker's
// cordon and byte budget (nothing without a worker), the host facts s samples, and the tier.
func (n *Node) load(s *loadSampler) verbs.Load {
	var l verbs.Load
	scratch := ""
	if n.work != nil {
		st := n.work.Status()
		l.Cordoned, l.CompileBudgetFull, scratch = st.Cordon != worker.CordonServing, st.BudgetLimited, st.ScratchRoot
	}
	s.sample(&l, scratch)
	l.Cache = n.cacheLoad()
	return l
}

// cacheLoad is the node's tier as a heartbeat carries it (memory tier, then disk tier), empty
// without a tier.
func (n *Node) cacheLoad() verbs.CacheLoad {
	if n.tier == nil {
		return verbs.CacheLoad{}
	}
	st := n.tier.Stats()
	tier := func(t store.TierStats) verbs.TierLoad {
		if !t.Enabled {
			return verbs.TierLoad{}
		}
		return verbs.TierLoad{Present: true, Items: verbs.Some(uint64(t.Items)), Bytes: verbs.Some(uint64(t.Bytes)),
			Evictions: verbs.Some(t.Evictions), IndexBytes: verbs.Some(uint64(t.IndexBytes))}
	}
	return verbs.CacheLoad{Hits: verbs.Some(st.Hits), Misses: verbs.Some(st.Misses),
		Tiers: []verbs.TierLoad{tier(st.Memory), tier(st.Disk)}}
}
