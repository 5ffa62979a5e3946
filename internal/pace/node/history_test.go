package node

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/history"
)

// TestClosedMinutesRideOnTheNextHeartbeat starts a real node (a fleet of one, whose worker
// registers with its own scheduler over loopback), closes two minutes of its history, and
// checks the next heartbeat hands both to the scheduler, which keeps them for the machine; the
// outbox then holds nothing the leader has not taken, and a third minute goes on its own.
func TestClosedMinutesRideOnTheNextHeartbeat(t *testing.T) {
	n := startFleetOfOne(t)
	waitRegisteredAt(t, n, n.endpoint())

	t0 := time.UnixMilli(history.BucketStart(time.Now().UnixMilli()))
	n.closeHistoryMinute(t0.Add(time.Second))
	n.closeHistoryMinute(t0.Add(time.Minute + time.Second))
	p := n.historyOut.Pending(n.id.NodeID)
	if len(p) != 2 {
		t.Fatalf("%d buckets pending; want 2", len(p))
	}
	if v := p[1].Values; v[history.OfferableSlots] != 1 || v[history.AvailableMemory] == 0 ||
		v[history.CPUTotalTicks] == 0 || v[history.CPUBusyTicks] > v[history.CPUTotalTicks] || p[1].Absent != 0 {
		t.Errorf("bucket %+v: want 1 offerable slot, the available memory and the host's CPU ticks", p[1])
	}
	wakeRegistrar(n) // a heartbeat would carry them within 20 s anyway
	got := waitHistory(t, n, 2)
	if got[0] != t0.Add(-time.Minute).UnixMilli() || got[1] != t0.UnixMilli() {
		t.Fatalf("minutes kept start at %d and %d; want the minutes before %v and %v", got[0], got[1], t0, t0.Add(time.Minute))
	}
	waitFor(t, "the outbox to be acknowledged", func() bool { return len(n.historyOut.Pending(n.id.NodeID)) == 0 })
	n.closeHistoryMinute(t0.Add(2*time.Minute + time.Second))
	if p := n.historyOut.Pending(n.id.NodeID); len(p) != 1 {
		t.Fatalf("after a third minute %d pending; want only the new one", len(p))
	}
	wakeRegistrar(n)
	waitHistory(t, n, 3)
}

// startFleetOfOne starts a real node whose worker registers with its own scheduler.
func startFleetOfOne(t *testing.T) *Node {
	t.Helper()
	env := Env{RoutedFrom: func() (string, error) { return "127.0.0.1", nil },
		DefaultStateDir: func() (string, string, error) { return t.TempDir(), "test", nil }}
	cfg, err := Load([]string{"--discovery=off", "--cluster-dir=" + t.TempDir(), "--listen-node=127.0.0.1:0", "--listen-raft=127.0.0.1:0",
		"--slots=1", "--toolchain=gcc", "--cache-memory=1MiB"}, 8<<30)
	if err != nil {
		t.Fatal(err)
	}
	n, err := Start(context.Background(), cfg, env, slog.New(slog.NewTextHandler(io.Discard, nil)), new(slog.LevelVar))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Stop(context.Background()) })
	return n
}

// TestABeatOnAConnectionTheSchedulerClosedAsIdleIsSentAgainAtOnce: the node port closes a
// connection idle for 5 s and a registrar beats every 20 s, so every beat but the first finds
// its connection closed; it is sent again on a new one, not left for the next beat.
func TestABeatOnAConnectionTheSchedulerClosedAsIdleIsSentAgainAtOnce(t *testing.T) {
	n := startFleetOfOne(t)
	waitRegisteredAt(t, n, n.endpoint())
	time.Sleep(schedulerIdle + time.Second)
	for _, w := range n.sched.Snapshot().Workers {
		if w.LastHeartbeatAge < schedulerIdle {
			t.Fatalf("a heartbeat %v ago: beats are 20 s apart, and nothing prompted one", w.LastHeartbeatAge)
		}
	}
	n.closeHistoryMinute(time.Now())
	n.work.Cordon() // a cordon is heartbeated at once (pace-node §6.1), on the connection kept
	waitForWithin(t, "the beat after the idle close to arrive", 3*time.Second, func() bool {
		return len(keptMinutes(n)) == 1
	})
}

func wakeRegistrar(n *Node) {
	select {
	case n.endpointMoved <- struct{}{}:
	default:
	}
}

// waitHistory waits for the leader to keep want minutes of this machine, and returns their
// starts.
func waitHistory(t *testing.T, n *Node, want int) []int64 {
	t.Helper()
	var got []int64
	waitFor(t, "the scheduler to keep the machine's minutes", func() bool {
		got = keptMinutes(n)
		return len(got) == want
	})
	return got
}

// keptMinutes are the starts of the minutes of the last two hours the leader keeps an offerable
// slots figure of this machine for.
func keptMinutes(n *Node) []int64 {
	v, err := n.fleetHistory.MachineView(n.id.NodeID, "2h", time.Now().Add(time.Minute))
	if err != nil {
		return nil
	}
	var starts []int64
	for _, s := range v.Series {
		for i, p := range s.Points {
			if s.Name == "offerable_slots" && p != nil {
				starts = append(starts, v.StartUnixMs+int64(i)*v.StepSeconds*1000)
			}
		}
	}
	return starts
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitForWithin(t, what, 20*time.Second, cond)
}

func waitForWithin(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
