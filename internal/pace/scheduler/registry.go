package scheduler

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Sentinels callers branch on. Each is also a wire.Refusal's cause; see
// RefusalOf.
var (
	// ErrUnknownWorker: a HEARTBEAT for an id this scheduler does not hold
	// (expired, withdrawn, or registered with a previous leader). The
	// worker registers again.
	ErrUnknownWorker = errors.New("unknown worker id")
	// ErrIdentityRequired: a joining verb on a connection that proved no
	// node identity.
	ErrIdentityRequired = errors.New("node identity required")
)

// Register records one toolchain at one endpoint (REGISTER). A repeated
// registration of the same (fingerprint, endpoint) by the same machine
// refreshes slots, codecs, version and capacity but keeps its id, its
// registered-age and its last-picked-age.
func (s *Scheduler) Register(req verbs.RegisterRequest, caller Caller, p Params) (verbs.RegisterOk, error) {
	if caller.NodeID == "" {
		return verbs.RegisterOk{}, ErrIdentityRequired
	}
	s.noteEndpoint(req, caller)
	now := s.cfg.Now()
	s.mu.Lock()
	m := s.machineLocked(caller, now)
	m.capacity = req.Capacity
	m.ownAddrs = parseAddrs(req.Capacity.InterfaceAddrs, m.ownAddrs)
	m.limits = computeLimits(m.capacity, m.load, m.reported, s.cfg.MemoryPerJob, s.cfg.ScratchPerJob)
	e := s.entries[entryKey{req.Fingerprint, req.Endpoint}]
	switch {
	case e != nil && !s.live(e, now):
		s.expireEntryLocked(e) // dropped already, whether or not swept yet
		e = nil
	case e != nil && e.machine != m:
		s.removeEntryLocked(e) // another machine took the endpoint over
		e = nil
	}
	if e == nil {
		e = s.addEntryLocked(req, m, now)
	}
	s.refreshEntryLocked(e, req, now)
	id := e.id
	s.mu.Unlock()
	s.counters.Registrations.Add(1)
	return verbs.RegisterOk{WorkerID: id, ClusterID: s.clusterID(p), Epoch: p.Epoch}, nil
}

// machineLocked finds or creates the caller's machine and notes where it
// was seen.
func (s *Scheduler) machineLocked(caller Caller, now time.Time) *machine {
	m := s.machines[caller.NodeID]
	if m == nil {
		m = &machine{nodeID: caller.NodeID}
		s.machines[caller.NodeID] = m
	}
	if len(caller.Key) > 0 {
		m.key = append(m.key[:0], caller.Key...)
	}
	if caller.Addr.IsValid() {
		m.addr = caller.Addr.Unmap()
	}
	m.lastSeen = now
	return m
}

func (s *Scheduler) addEntryLocked(req verbs.RegisterRequest, m *machine, now time.Time) *entry {
	e := &entry{id: rand.Text(), key: entryKey{req.Fingerprint, req.Endpoint}, machine: m, registeredAt: now}
	s.entries[e.key] = e
	s.byID[e.id] = e
	m.entries = append(m.entries, e)
	s.insertEntryLocked(e)
	return e
}

func (s *Scheduler) refreshEntryLocked(e *entry, req verbs.RegisterRequest, now time.Time) {
	e.slots = int(min(req.Slots, maxJobs))
	if req.Slots == 0 {
		e.slots = deriveSlots(req.Capacity)
	}
	e.codecs = req.Codecs
	e.label = req.Capacity.ToolchainLabel
	e.version = req.Capacity.Version
	e.lastHeartbeat = now // a registration is as good as a heartbeat
	e.dialHint = dialHint(e.key.endpoint, e.machine)
	e.machine.clampInFlight()
	s.refreshMachineLocked(e.machine)
}

// removeEntryLocked drops an entry from every index. Its leases stay: the
// caller decides whether they are reclaimed.
func (s *Scheduler) removeEntryLocked(e *entry) {
	delete(s.entries, e.key)
	delete(s.byID, e.id)
	s.deleteEntryLocked(e)
	m := e.machine
	for i, x := range m.entries {
		if x == e {
			m.entries = append(m.entries[:i], m.entries[i+1:]...)
			break
		}
	}
	m.clampInFlight()
	s.refreshMachineLocked(m)
}

// Heartbeat records a worker's machine-wide in-flight count and load
// (HEARTBEAT). The in-flight figure is re-based on what the machine says,
// clamped to its largest registered slot count.
func (s *Scheduler) Heartbeat(req verbs.HeartbeatRequest, caller Caller) error {
	if caller.NodeID == "" {
		return ErrIdentityRequired
	}
	now := s.cfg.Now()
	s.mu.Lock()
	e := s.byID[req.WorkerID]
	if e == nil || e.machine.nodeID != caller.NodeID || !s.live(e, now) {
		s.mu.Unlock()
		return ErrUnknownWorker
	}
	m := s.machineLocked(caller, now)
	m.gen++
	m.reported, m.pending = min(int(min(req.InFlight, maxJobs)), m.maxSlots()), 0
	for _, x := range m.entries {
		x.lastHeartbeat = now
	}
	fresh := s.applyLoadLocked(m, req.Load)
	s.mu.Unlock()
	s.deliverHistory(caller.NodeID, fresh)
	return nil
}

// applyLoadLocked stores a machine's load and returns the history buckets
// past its high-water mark, so redelivered buckets count once.
func (s *Scheduler) applyLoadLocked(m *machine, l verbs.Load) []verbs.HistoryBucket {
	m.load = l
	m.load.History = nil // delivered below; not kept
	if len(l.InterfaceAddrs) > 0 {
		m.ownAddrs = parseAddrs(l.InterfaceAddrs, m.ownAddrs)
	}
	m.limits = computeLimits(m.capacity, l, m.reported, s.cfg.MemoryPerJob, s.cfg.ScratchPerJob)
	for _, e := range m.entries {
		e.dialHint = dialHint(e.key.endpoint, m)
	}
	s.refreshMachineLocked(m)
	var fresh []verbs.HistoryBucket
	for _, b := range l.History {
		if b.StartMs > m.historyHigh {
			fresh = append(fresh, b)
			m.historyHigh = b.StartMs
		}
	}
	return fresh
}

func (s *Scheduler) deliverHistory(nodeID string, buckets []verbs.HistoryBucket) {
	if len(buckets) > 0 && s.cfg.History != nil {
		s.cfg.History(nodeID, buckets)
	}
}

// Withdraw retracts one registration (WITHDRAW). An unknown id, or one
// another machine holds, is not an error: withdrawal is best-effort. The
// entry's leases stay outstanding — the compiles they granted may still
// be running — until released or expired.
func (s *Scheduler) Withdraw(req verbs.WithdrawRequest, caller Caller) error {
	if caller.NodeID == "" {
		return ErrIdentityRequired
	}
	s.mu.Lock()
	e := s.byID[req.WorkerID]
	withdrawn := e != nil && e.machine.nodeID == caller.NodeID
	if withdrawn {
		s.removeEntryLocked(e)
		e.machine.lastSeen = s.cfg.Now()
	}
	s.mu.Unlock()
	if withdrawn {
		s.counters.WorkersWithdrawn.Add(1)
	}
	return nil
}

// Announce records a node's statement of itself (NODE-ANNOUNCE): its
// capacity, load and history, worker or not. Join memos are the
// formation layer's business and are not kept here.
func (s *Scheduler) Announce(req verbs.AnnounceRequest, caller Caller) error {
	if caller.NodeID == "" {
		return ErrIdentityRequired
	}
	s.mu.Lock()
	m := s.machineLocked(caller, s.cfg.Now())
	m.capacity = req.Capacity
	m.ownAddrs = parseAddrs(req.Capacity.InterfaceAddrs, m.ownAddrs)
	fresh := s.applyLoadLocked(m, req.Load)
	s.mu.Unlock()
	s.deliverHistory(caller.NodeID, fresh)
	return nil
}

// parseAddrs reads reported interface addresses into dst[:0], skipping
// any that do not parse: they are only ever compared.
func parseAddrs(texts []string, dst []netip.Addr) []netip.Addr {
	dst = dst[:0]
	for _, t := range texts {
		if a, err := netip.ParseAddr(t); err == nil {
			dst = append(dst, a.Unmap().WithZone(""))
		}
	}
	return dst
}

// dialHint is where the scheduler last saw the machine, with the
// endpoint's port — only when the machine reports that address as its
// own, it could be another machine's route to it, and it differs from the
// endpoint (pace-wire §1.13 LEASE grant).
func dialHint(endpoint string, m *machine) string {
	a := m.addr.WithZone("")
	if !a.IsValid() || a.IsLoopback() || a.IsUnspecified() || a.IsLinkLocalUnicast() || a.IsMulticast() {
		return ""
	}
	host, port, err := net.SplitHostPort(endpoint)
	if err != nil {
		return ""
	}
	if h, err := netip.ParseAddr(host); err == nil && h.Unmap().WithZone("") == a {
		return ""
	}
	for _, own := range m.ownAddrs {
		if own == a {
			return net.JoinHostPort(a.String(), port)
		}
	}
	return ""
}

// noteEndpoint counts a registration whose endpoint host is not the
// address it arrived from, and logs the first few (pace-node §6.1: a
// measurement, not a control — the registration is accepted).
func (s *Scheduler) noteEndpoint(req verbs.RegisterRequest, caller Caller) {
	if !caller.Addr.IsValid() || endpointHostIs(req.Endpoint, caller.Addr) {
		return
	}
	s.counters.EndpointMismatch.Add(1)
	if s.mismatchLogs.Add(1) <= int64(s.cfg.MismatchLogLimit) {
		s.cfg.Logger.Info("worker endpoint differs from the address its registration came from",
			"endpoint", req.Endpoint, "source", caller.Addr.String(),
			"toolchain", fmt.Sprintf("%s (%s)", req.Fingerprint, req.Capacity.ToolchainLabel))
	}
}

func endpointHostIs(endpoint string, addr netip.Addr) bool {
	host, _, err := net.SplitHostPort(endpoint)
	if err != nil {
		return false
	}
	h, err := netip.ParseAddr(host)
	return err == nil && h.Unmap().WithZone("") == addr.Unmap().WithZone("")
}

// codeOf maps this package's sentinels to their refusals.
func codeOf(err error) (wire.Refusal, bool) {
	switch {
	case errors.Is(err, ErrUnknownWorker):
		return wire.Refuse(wire.CodeNoWorker, "unknown worker id; register again"), true
	case errors.Is(err, ErrIdentityRequired):
		return wire.Refuse(wire.CodeNodeIdentityRequired, ""), true
	}
	return wire.Refusal{}, false
}
