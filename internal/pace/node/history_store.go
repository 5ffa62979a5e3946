package node

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/history"
	"github.com/buildfleet/buildfleet/internal/pace/scheduler"
)

// HistoryFile is the leader's history in the state directory (pace-node §6.5).
const HistoryFile = "history"

// historySaveEvery is how often the history is written while something changed; it is also
// written at stop.
const historySaveEvery = 5 * time.Minute

// historyStore is where the fleet history is kept between runs: the file, whether this node
// may write it, and what it last wrote.
type historyStore struct {
	mu         sync.Mutex
	path       string // "" until loaded
	memoryOnly bool   // the file is a newer build's: kept, never overwritten
	saved      uint64 // the Fleet's Changes at the last save
	failing    bool   // the last save failed (logged once until one succeeds)
}

// loadHistory reads the history file into the fleet history. An absent file starts empty; an
// unreadable one starts empty with one log line and is replaced at the next save; a newer
// build's is kept as it is, and this node then keeps its history in memory only.
func (n *Node) loadHistory() {
	s := &n.historyStore
	s.mu.Lock()
	defer s.mu.Unlock()
	s.path = filepath.Join(n.plan.StateDir, HistoryFile)
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err == nil {
		err = n.fleetHistory.UnmarshalBinary(data)
	}
	switch {
	case errors.Is(err, history.ErrNewerFormat):
		s.memoryOnly = true
		n.log.Warn("history file written by a newer build: kept as it is; this node keeps its fleet history in memory only",
			"file", s.path, "err", err)
	case err != nil:
		n.log.Warn("history file unreadable: starting with an empty fleet history; the file is replaced at the next save",
			"file", s.path, "err", err)
	default:
		s.saved = n.fleetHistory.Changes()
	}
}

// saveHistory writes the fleet history when it changed since the last save, through a
// temporary file renamed over the old one, so a crash leaves the old file or the new one.
func (n *Node) saveHistory() {
	s := &n.historyStore
	s.mu.Lock()
	defer s.mu.Unlock()
	changes := n.fleetHistory.Changes()
	if s.path == "" || s.memoryOnly || changes == s.saved {
		return
	}
	data, err := n.fleetHistory.MarshalBinary()
	if err == nil {
		err = writeFileSynced(s.path, data)
	}
	if err != nil {
		if !s.failing {
			n.log.Warn("history file not written; the fleet history stays in memory until a save succeeds", "file", s.path, "err", err)
		}
		s.failing = true
		return
	}
	s.saved, s.failing = changes, false
}

// writeFileSynced replaces path with data atomically: a synced temporary file in the same
// directory, renamed into place.
func writeFileSynced(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("history file: %w", err)
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("history file: %w", err)
	}
	return nil
}

// keepHistory notes every second that this node leads, so the minutes of its term read 0 until
// a LEASE is decided rather than null, and saves the history every historySaveEvery.
func (n *Node) keepHistory(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	nextSave := n.now().Add(historySaveEvery)
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := n.now()
		if n.cons.IsLeader() {
			n.fleetHistory.Leading(now)
		}
		if !now.Before(nextSave) {
			n.saveHistory()
			nextSave = now.Add(historySaveEvery)
		}
	}
}

// dispatchOf is the history series each scheduler outcome is counted in.
var dispatchOf = [scheduler.Outcomes]history.Dispatch{
	scheduler.Granted:                history.Dispatched,
	scheduler.RefusedAlreadyInFlight: history.FallbackAlreadyInFlight,
	scheduler.RefusedNoWorker:        history.FallbackNoWorker,
	scheduler.RefusedAllExcluded:     history.FallbackAllExcluded,
	scheduler.RefusedNoCapacity:      history.FallbackNoCapacity,
	scheduler.RefusedWithdrawn:       history.FallbackWithdrawn,
	scheduler.RefusedSignFailed:      history.FallbackSignFailed,
}

// decided counts a LEASE outcome into the fleet history. The scheduler decides only while this
// node leads (scheduler verbs are answered not-leader otherwise).
func (n *Node) decided(o scheduler.Outcome) {
	if o < scheduler.Outcomes {
		n.fleetHistory.Decided(dispatchOf[o], n.now())
	}
}

// fleetSeries is the fleet's charts over rangeName (one of history.Ranges) up to now, as
// /fleet/series.json serves them.
func (n *Node) fleetSeries(rangeName string, now time.Time) (history.View, error) {
	return n.fleetHistory.View(rangeName, now)
}

// machineSeries is one machine's own charts over rangeName up to now.
func (n *Node) machineSeries(nodeID, rangeName string, now time.Time) (history.View, error) {
	return n.fleetHistory.MachineView(nodeID, rangeName, now)
}
