package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/buildfleet/buildfleet/internal/pace/procstatus"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/kv"
	"github.com/buildfleet/buildfleet/internal/pace/value"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// procKiB reads one field (VmRSS, VmHWM) of /proc/<pid>/status in KiB.
func procKiB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	n, err := procstatus.KiB(pid, field)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// bigStore is a STORE frame of payloadLen bytes carrying a compile value whose object is
// object: the frame is written as head, object, tail so six senders share one object buffer.
type bigStore struct{ head, object, tail []byte }

func newBigStore(key string, payloadLen int, object []byte) bigStore {
	fieldsLen := 4 + len(key) + 3*4 + 4            // key, three empty fields, the value's length
	objLen := payloadLen - fieldsLen - (1 + 4 + 4) // the value's generation, object length, region count
	var head []byte
	head = wire.AppendRequestHeader(head, wire.RequestHeader{Magic: wire.Magic, Version: wire.Version, Op: wire.OpStore, PayloadLen: uint32(payloadLen)})
	head = binary.BigEndian.AppendUint32(head, uint32(len(key)))
	head = append(head, key...)
	head = append(head, make([]byte, 12)...)
	head = binary.BigEndian.AppendUint32(head, uint32(1+4+objLen+4))
	head = append(head, value.Generation)
	head = binary.BigEndian.AppendUint32(head, uint32(objLen))
	return bigStore{head: head, object: object[:objLen], tail: make([]byte, 4)}
}

// send writes the frame and reads the reply's status and refusal code.
func (b bigStore) send(conn net.Conn, br *bufio.Reader) (wire.Status, wire.Code, error) {
	bufs := net.Buffers{b.head, b.object, b.tail}
	if _, err := bufs.WriteTo(conn); err != nil {
		return 0, 0, err
	}
	st, _, err := wire.ReadReply(br, wire.OpStore, 1<<16, nil)
	var r wire.Refusal
	if errors.As(err, &r) {
		return wire.StatusError, r.Code, nil
	}
	return st, 0, err
}

func TestSixBigStoresStayUnderTheBudget(t *testing.T) {
	const payloadLen, senders = 200<<20 - 1, 6
	cfg := kv.Config{MaxMemory: 64 << 20, MaxInflight: 256 << 20}
	p := launch(t, "--metrics=127.0.0.1:0", "--max-memory=64MiB", "--max-inflight=256MiB",
		"--storage="+t.TempDir(), "--storage-sync=never")
	pid := p.cmd.Process.Pid
	before := procKiB(t, pid, "VmRSS")
	object := bytes.Repeat([]byte("0123456789abcdef"), payloadLen/16+1)

	var wg sync.WaitGroup
	outcomes := make(chan string, senders)
	for i := range senders {
		frame := newBigStore(fmt.Sprint("big-", i), payloadLen, object)
		wg.Go(func() {
			conn, err := net.Dial("tcp", p.addr)
			if err != nil {
				outcomes <- err.Error()
				return
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(60 * time.Second))
			br := bufio.NewReader(conn)
			busy := 0
			for {
				st, code, err := frame.send(conn, br)
				if code == wire.CodeEndpointBusy {
					busy++ // refused before a byte of it was buffered; try again
					continue
				}
				outcomes <- fmt.Sprintf("%v %v %v after %d endpoint-busy", st, code, err, busy)
				return
			}
		})
	}
	var peakDuring time.Duration
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for polling := true; polling; {
		select {
		case <-done:
			polling = false
		case <-time.After(50 * time.Millisecond):
			took, err := politeRound(p, "")
			if err != nil {
				t.Errorf("polite FETCH during the burst: %v", err)
			}
			peakDuring = max(peakDuring, took)
		}
	}
	close(outcomes)
	for o := range outcomes {
		if !strings.HasPrefix(o, "Ok") {
			t.Errorf("a big STORE ended %s", o)
		}
	}
	hwm := procKiB(t, pid, "VmHWM") << 10
	ceiling := cfg.MemoryCeiling()
	busy := p.metric(t, "pace_cache_frames_refused_endpoint_busy_total")
	// After the burst the memory goes back to the OS.
	var after int64
	deadline := time.Now().Add(10 * time.Second)
	for after = procKiB(t, pid, "VmRSS") << 10; after > cfg.MaxMemory+kv.MemoryOverhead && time.Now().Before(deadline); after = procKiB(t, pid, "VmRSS") << 10 {
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("six %d-byte STOREs: RSS %d MiB before, peak %d MiB (ceiling %d MiB = memory tier + in-flight budget + an eighth + %d MiB), %d MiB after; %v endpoint-busy refusals; slowest polite FETCH during the burst %v",
		payloadLen, before>>10, hwm>>20, ceiling>>20, kv.MemoryOverhead>>20, after>>20, busy, peakDuring)
	if hwm > ceiling {
		t.Fatalf("peak RSS %d MiB over the ceiling %d MiB", hwm>>20, ceiling>>20)
	}
	if after > cfg.MaxMemory+kv.MemoryOverhead {
		t.Fatalf("RSS still %d MiB after the burst", after>>20)
	}
}
