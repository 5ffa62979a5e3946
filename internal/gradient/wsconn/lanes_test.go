package wsconn

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// writerGate holds the writer goroutine before its first batch until opened.
type writerGate struct {
	held chan struct{}
	open chan struct{}
	once sync.Once
}

func newWriterGate() *writerGate {
	return &writerGate{held: make(chan struct{}), open: make(chan struct{})}
}

func (g *writerGate) beforeBatch(wire.LaneKind, int) {
	g.once.Do(func() {
		close(g.held)
		<-g.open
	})
}

// lanePair is an agreed session whose server side writes through hooks.
func lanePair(t *testing.T, opts Options) (*WorkerConn, *ServerConn) {
	t.Helper()
	url, accepted := serveWorkers(t, opts)
	worker := dialServer(t, url, DialOptions{})
	server := acceptOne(t, accepted)
	agreeBoth(t, worker, server)
	worker.EnterSession()
	return worker, server
}

// gradient-protocol §1.5: with the bulk queue full (16 chunks waiting behind a busy writer) a
// control reply is still accepted at once and written before every queued chunk.
func TestControlOvertakesAFullBulkQueue(t *testing.T) {
	gate := newWriterGate()
	worker, server := lanePair(t, Options{hooks: &testHooks{beforeBatch: gate.beforeBatch}})
	ctx := testCtx(t)

	if err := server.Send(ctx, narPush(0, wire.BulkChunkSize)); err != nil {
		t.Fatal(err)
	}
	<-gate.held // the writer holds chunk 0 as its batch
	for i := uint64(1); i <= BulkLaneSize; i++ {
		if err := server.Send(ctx, narPush(i, wire.BulkChunkSize)); err != nil {
			t.Fatal(err)
		}
	}
	full, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := server.Send(full, narPush(99, 1)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Send to a full bulk lane = %v, want it to wait (the queue is full)", err)
	}
	if err := server.Send(ctx, &wire.AbortJob{JobID: "j", Reason: "control"}); err != nil {
		t.Fatalf("control Send with the bulk lane full = %v", err)
	}
	close(gate.open)

	order := readLabels(t, worker, BulkLaneSize+2)
	want := []string{"bulk 0", "control"}
	for i := 1; i <= BulkLaneSize; i++ {
		want = append(want, fmt.Sprintf("bulk %d", i))
	}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("arrival order (-want +got):\n%s", diff)
	}
}

// readLabels reads n messages and names each: "bulk <offset>" or "control".
func readLabels(t *testing.T, c *WorkerConn, n int) []string {
	t.Helper()
	var labels []string
	for range n {
		m, release, err := c.Read(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		labels = append(labels, frameLabel(m))
		release()
	}
	return labels
}

func frameLabel(m wire.ServerMessage) string {
	if p, ok := m.(*wire.NarPush); ok {
		return fmt.Sprintf("bulk %d", p.Offset)
	}
	return "control"
}

// gradient-protocol §1.5 with a real stalled reader: the peer stops reading until TCP backs
// up and the bulk queue fills; a control Send is accepted at once, and once the peer reads
// again the control frame arrives ahead of the chunks that were queued before it.
func TestControlReplyPassesAStalledReader(t *testing.T) {
	url, accepted := serveWorkers(t, Options{})
	raw := rawDial(t, url)
	raw.write(wire.VersionFrame(wire.ProtoVersions()))
	server := acceptOne(t, accepted)
	ctx := testCtx(t)
	if _, err := server.Agree(ctx); err != nil {
		t.Fatal(err)
	}

	var sent atomic.Uint64
	senderCtx, stopSender := context.WithCancel(ctx)
	senderDone := make(chan struct{})
	go func() {
		defer close(senderDone)
		for seq := uint64(0); server.Send(senderCtx, narPush(seq, wire.BulkChunkSize)) == nil; seq++ {
			sent.Add(1)
		}
	}()
	waitUntilStuck(t, server, &sent)
	queuedBefore := sent.Load()
	if err := server.Send(ctx, &wire.AbortJob{JobID: "j", Reason: "control"}); err != nil {
		t.Fatalf("control Send behind a stalled reader = %v", err)
	}
	stopSender()
	<-senderDone

	reads := raw.reading()
	reads.next(t) // version frame
	if overtaken := countOvertaken(t, reads, sent.Load(), queuedBefore); overtaken < BulkLaneSize-1 {
		t.Errorf("the control frame overtook %d queued chunks, want at least %d", overtaken, BulkLaneSize-1)
	}
}

// countOvertaken reads the sent chunks (in order) and the control frame, and counts the
// chunks queued before the control frame that arrived after it.
func countOvertaken(t *testing.T, reads *rawReads, sent, queuedBefore uint64) int {
	t.Helper()
	overtaken := 0
	for seen, controlSeen := uint64(0), false; seen < sent || !controlSeen; {
		m, err := wire.DecodeServerMessage(reads.next(t), 30)
		if err != nil {
			t.Fatal(err)
		}
		switch m := m.(type) {
		case *wire.NarPush:
			if m.Offset != seen {
				t.Fatalf("chunk %d arrived where %d was due", m.Offset, seen)
			}
			if controlSeen && m.Offset < queuedBefore {
				overtaken++
			}
			seen++
		case *wire.AbortJob:
			controlSeen = true
		}
	}
	return overtaken
}

// waitUntilStuck waits until the bulk queue is full and the sender has made no progress for a
// while: the writer is blocked on a peer that reads nothing.
func waitUntilStuck(t *testing.T, server *ServerConn, sent *atomic.Uint64) {
	t.Helper()
	last, still := sent.Load(), 0
	for still < 10 {
		select {
		case <-testCtx(t).Done():
			t.Fatal("the bulk queue never filled")
		case <-time.After(10 * time.Millisecond):
		}
		now := sent.Load()
		if now == last && len(server.s.lanes.bulk) == BulkLaneSize {
			still++
		} else {
			last, still = now, 0
		}
	}
}

// gradient-protocol §1.5: a Send that waits longer than the stall timeout for room fails with
// ErrStalled; the socket stays open and the control lane keeps working.
func TestSendStallsWhenThePeerStopsReading(t *testing.T) {
	url, accepted := serveWorkers(t, Options{StallTimeout: 50 * time.Millisecond})
	raw := rawDial(t, url)
	raw.write(wire.VersionFrame(wire.ProtoVersions()))
	server := acceptOne(t, accepted)
	ctx := testCtx(t)

	var err error
	for seq := uint64(0); err == nil; seq++ {
		err = server.Send(ctx, narPush(seq, wire.BulkChunkSize))
	}
	if !errors.Is(err, ErrStalled) {
		t.Fatalf("Send to a stalled peer = %v, want ErrStalled", err)
	}
	if server.Err() != nil {
		t.Errorf("a stalled Send closed the socket: %v", server.Err())
	}
	if err := server.Send(ctx, &wire.AbortJob{JobID: "j"}); err != nil {
		t.Errorf("control Send after a bulk stall = %v", err)
	}
}

// gradient-protocol §1.5 batch limits on a real socket: control batches go first and hold at
// most 32 frames, bulk batches stop filling at 256 KiB, no batch mixes lanes, and a control
// batch leaves in one socket write.
func TestBatchesRespectTheirLimits(t *testing.T) {
	gate := newWriterGate()
	var mu sync.Mutex
	var batches []batchStats
	var writes []int64
	var server *ServerConn
	hooks := &testHooks{beforeBatch: gate.beforeBatch, afterBatch: func(b batchStats) {
		mu.Lock()
		defer mu.Unlock()
		batches = append(batches, b)
		writes = append(writes, server.s.bc.writes.Load())
	}}
	worker, server := lanePair(t, Options{hooks: hooks})
	ctx := testCtx(t)

	const controls, chunkSize = 100, 100 << 10
	send := func(m wire.ServerMessage) {
		if err := server.Send(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	send(&wire.AbortJob{JobID: "primer"})
	<-gate.held
	for i := range BulkLaneSize {
		send(narPush(uint64(i), chunkSize))
	}
	for range controls {
		send(&wire.AbortJob{JobID: "j"})
	}
	close(gate.open)
	readLabels(t, worker, 1+controls+BulkLaneSize)

	// The peer can read a batch's frames before the writer's afterBatch hook records it,
	// so wait until every sent frame is accounted for.
	recorded := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, b := range batches {
			n += b.frames
		}
		return n
	}
	for deadline := time.Now().Add(5 * time.Second); recorded() < 1+controls+BulkLaneSize && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	checkBatches(t, batches, writes)
}

// checkBatches compares the recorded batches with what the lane rules dictate for one primer,
// 100 control frames and 16 chunks of 100 KiB.
func checkBatches(t *testing.T, batches []batchStats, writes []int64) {
	t.Helper()
	want := []batchStats{{lane: wire.LaneControl, frames: 1}, {lane: wire.LaneControl, frames: 32},
		{lane: wire.LaneControl, frames: 32}, {lane: wire.LaneControl, frames: 32}, {lane: wire.LaneControl, frames: 4}}
	for range 5 {
		want = append(want, batchStats{lane: wire.LaneBulk, frames: 3}) // 300 KiB: stops past 256
	}
	want = append(want, batchStats{lane: wire.LaneBulk, frames: 1})
	if len(batches) != len(want) {
		t.Fatalf("%d batches, want %d: %+v", len(batches), len(want), batches)
	}
	for i, b := range batches {
		if b.lane != want[i].lane || b.frames != want[i].frames || b.mixed {
			t.Errorf("batch %d = %+v, want %s lane with %d frames", i, b, want[i].lane, want[i].frames)
		}
		if b.lane == wire.LaneBulk && b.bytes-b.bytes/b.frames >= MaxBulkBatchBytes {
			t.Errorf("bulk batch %d kept filling past %d bytes: %+v", i, MaxBulkBatchBytes, b)
		}
		if b.lane == wire.LaneControl && i > 0 && writes[i]-writes[i-1] != 1 {
			t.Errorf("control batch %d took %d socket writes, want 1", i, writes[i]-writes[i-1])
		}
	}
}
