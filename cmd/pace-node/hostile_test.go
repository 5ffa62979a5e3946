package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/buildfleet/buildfleet/internal/pace/procstatus"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/kvclient"
	"github.com/buildfleet/buildfleet/internal/pace/promexport/promexporttest"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// The node port under the pace-kv probes (pace-wire §1.8): slow and idle connections from many
// addresses, and large concurrent frames. A polite client on this machine is still served.

func dialFrom(src, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	return d.Dial("tcp", addr)
}

// politeFetch is one tier FETCH from this machine on a fresh connection, timed.
func politeFetch(n *nodeProc) (time.Duration, error) {
	start := time.Now()
	_, _, err := kvclient.Fetch(context.Background(), kvclient.Options{Addr: n.addr, Timeout: 5 * time.Second}, "polite")
	return time.Since(start), err
}

func (n *nodeProc) series(series string, labels ...string) float64 {
	n.t.Helper()
	return promexporttest.Value(n.t, "http://"+n.admin+"/metrics", series, labels...)
}

func TestNodePortServesThisMachineWhileSlowAndIdleConnectionsHoldIt(t *testing.T) {
	n := startNode(t, t.TempDir(), "--slots=0", "--cache-memory=64MiB")
	const attackers, addrs = 1030, 10
	port := n.addr[strings.LastIndex(n.addr, ":"):]
	closed := make(chan struct{}, attackers)
	for i := range attackers {
		conn, err := dialFrom(fmt.Sprintf("127.0.0.%d", 2+i%addrs), "127.0.0.1"+port)
		if err != nil {
			t.Fatal(err)
		}
		go func(slow bool) {
			if slow { // a header a byte every two seconds: never whole within the frame timeout
				go func() {
					for _, b := range wire.AppendRequest(nil, wire.OpFetch, []byte("k")) {
						if _, err := conn.Write([]byte{b}); err != nil {
							return
						}
						time.Sleep(2 * time.Second)
					}
				}()
			}
			conn.SetReadDeadline(time.Now().Add(30 * time.Second))
			io.Copy(io.Discard, conn)
			conn.Close()
			closed <- struct{}{}
		}(i%2 == 0)
	}
	time.Sleep(1100 * time.Millisecond) // connections waiting a second may be displaced
	var slowest time.Duration
	for range 20 {
		took, err := politeFetch(n)
		if err != nil {
			t.Fatalf("polite FETCH refused: %v", err)
		}
		slowest = max(slowest, took)
	}
	if slowest > 100*time.Millisecond {
		t.Fatalf("polite FETCH took %v with %d attacker connections", slowest, attackers)
	}
	// The idle half goes at the node port's 5 s idle close, the slow half at the 10 s frame
	// deadline; only the idle half is waited for here.
	for range attackers / 2 {
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Fatal("idle attacker connections outlived the idle close")
		}
	}
	displaced := n.series("pace_node_frame_connections_closed_total", "reason", "displaced")
	rejected := n.series("pace_node_frame_connections_refused_at_capacity_total")
	idle := n.series("pace_node_frame_connections_closed_total", "reason", "idle")
	t.Logf("polite FETCH at most %v beside %d attacker connections; %v rejected at capacity, %v displaced, %v closed idle",
		slowest, attackers, rejected, displaced, idle)
	if rejected != attackers-1024 || displaced < 1 || idle < 512-displaced {
		t.Fatalf("attacker outcomes: %v rejected, %v displaced, %v idle", rejected, displaced, idle)
	}
}

func procStatusKiB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	n, err := procstatus.KiB(pid, field)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Large frames are charged to the node port's budget before they are read: while one 200 MiB
// STORE holds most of it, five more are refused endpoint-busy unread (and drained), so the
// node never holds more than the budget of payloads.
func TestNodePortPayloadBudget(t *testing.T) {
	const budget, cache = 256 << 20, 64 << 20
	n := startNode(t, t.TempDir(), "--slots=0", "--cache-memory=64MiB", "--max-inflight=256MiB")
	port := n.addr[strings.LastIndex(n.addr, ":"):]
	const payloadLen = 200<<20 - 1
	payload := make([]byte, payloadLen)
	frame := func() net.Buffers {
		return net.Buffers{wire.AppendRequestHeader(nil, wire.RequestHeader{Magic: wire.Magic, Version: wire.Version,
			Op: wire.OpStore, PayloadLen: payloadLen}), payload}
	}
	holder, err := dialFrom("127.0.0.2", "127.0.0.1"+port)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	held := frame()
	held[1] = payload[:payloadLen/2]
	held.WriteTo(holder)
	waitFor(t, "the holder's charge", func() bool { return n.series("pace_node_frame_inflight_payload_bytes") == payloadLen })

	var wg sync.WaitGroup
	codes := make(chan wire.Code, 8)
	for range 5 {
		wg.Go(func() { codes <- sendRefused(t, "127.0.0.3", "127.0.0.1"+port, frame()) })
	}
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != wire.CodeEndpointBusy {
			t.Errorf("a STORE beside the held budget answered %v, want endpoint-busy", c)
		}
	}
	holder.Write(payload[payloadLen/2:])
	if _, _, err := wire.ReadReply(bufio.NewReader(holder), wire.OpStore, 1<<16, nil); err == nil {
		t.Fatal("a STORE from another machine was accepted by the tier")
	}
	waitFor(t, "the budget to empty", func() bool { return n.series("pace_node_frame_inflight_payload_bytes") == 0 })
	hwm := procStatusKiB(t, n.cmd.Process.Pid, "VmHWM") << 10
	t.Logf("one 200 MiB STORE held the budget, five refused endpoint-busy unread; node peak RSS %d MiB", hwm>>20)
	if busy := n.series("pace_node_frame_frames_refused_total", "kind", "endpoint_busy"); busy != 5 {
		t.Fatalf("endpoint-busy counted %v times, want 5", busy)
	}
	if hwm > budget+cache+256<<20 {
		t.Fatalf("node peak RSS %d MiB with a %d MiB budget", hwm>>20, budget>>20)
	}
}

// sendRefused writes frame from src and returns the refusal code of its reply.
func sendRefused(t *testing.T, src, addr string, frame net.Buffers) wire.Code {
	conn, err := dialFrom(src, addr)
	if err != nil {
		t.Error(err)
		return 0
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	go frame.WriteTo(conn)
	_, _, err = wire.ReadReply(bufio.NewReader(conn), wire.OpStore, 1<<16, nil)
	var r wire.Refusal
	if !errors.As(err, &r) {
		t.Errorf("a 200 MiB STORE from another machine: %v", err)
	}
	return r.Code
}
