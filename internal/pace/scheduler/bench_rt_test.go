package scheduler

import (
	"bufio"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/identity"
	leasetoken "github.com/buildfleet/buildfleet/internal/pace/lease"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// The benchmarks in this file take apart the dispatch benchmark's LEASE+RELEASE figure
// (bench/dispatch against a whole pace-node): the cost of signing one lease with a
// real Ed25519 identity key, and the same round trips over loopback TCP with a minimal frame
// loop in front of the scheduler, with and without real signing, and with no scheduler at all
// (a canned grant: the floor that the sockets alone set on this machine).

// edSigner signs the way the node's lease signer does: lease.Issue with an identity key.
type edSigner struct{ key *identity.Key }

func (s edSigner) IssueLease(c Claims) (string, error) {
	return leasetoken.Issue(leasetoken.Claims{Serial: c.Serial, Endpoint: c.Endpoint, Fingerprint: c.Fingerprint,
		Key: c.Key, ExpiresAt: c.ExpiresAt, ClusterID: c.ClusterID, Epoch: c.Epoch,
		SignerID: "0123456789abcdef0123456789abcdef", WorkerKey: c.WorkerKey}, s.key)
}

func newEdSigner(b *testing.B) edSigner {
	key, err := identity.NewKey(rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	return edSigner{key: key}
}

// rtScheduler is one machine serving one toolchain with room for every client.
func rtScheduler(b *testing.B, signer Signer) *Scheduler {
	s, err := New(Config{ClusterID: "bench", Signer: signer, HeartbeatTimeout: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	c := Caller{NodeID: "n0", Addr: netip.MustParseAddr("127.0.0.1")}
	req := verbs.RegisterRequest{Fingerprint: "fp0", Endpoint: "127.0.0.1:6674", Slots: 1 << 16}
	if _, err := s.Register(req, c, Params{}); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkLeaseSign is one lease token issued with a real Ed25519 key: the part of every
// grant that is pure CPU and cannot be batched.
func BenchmarkLeaseSign(b *testing.B) {
	signer := newEdSigner(b)
	claims := Claims{Serial: 1, Endpoint: "127.0.0.1:6674", Fingerprint: "fp0", ClusterID: "bench",
		Key: fmt.Sprintf("%064x", 1), ExpiresAt: time.Now().Add(10 * time.Minute)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := signer.IssueLease(claims); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoopbackLeaseRelease is LEASE+RELEASE from 16 clients, each on two persistent
// loopback connections as bench/leaseload drives a node, served by a minimal frame loop.
func BenchmarkLoopbackLeaseRelease(b *testing.B) {
	cases := []struct {
		name  string
		serve func(b *testing.B) frameHandler
	}{
		{"canned-grant", func(b *testing.B) frameHandler { return cannedHandler(b) }},
		{"trivial-signer", func(b *testing.B) frameHandler { return schedulerHandler(rtScheduler(b, trivialSigner{})) }},
		{"ed25519-signer", func(b *testing.B) frameHandler { return schedulerHandler(rtScheduler(b, newEdSigner(b))) }},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			addr := listen(b, tc.serve(b))
			var next atomic.Uint64
			b.SetParallelism(8) // 16 goroutines on 2 cores, the dispatch benchmark's shape
			b.ReportAllocs()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) { rtClient(b, pb, addr, &next) })
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "roundtrips/s")
		})
	}
}

// frameHandler answers one request: status and the Ok or Error payload appended to dst.
type frameHandler func(dst []byte, op wire.Op, payload []byte) (wire.Status, []byte)

func schedulerHandler(s *Scheduler) frameHandler {
	return func(dst []byte, op wire.Op, payload []byte) (wire.Status, []byte) {
		arity := verbs.LeaseArity
		if op == wire.OpRelease {
			arity = verbs.ReleaseArity
		}
		fields, err := wire.SplitFields(nil, payload, arity)
		if err == nil {
			dst, err = s.Serve(dst, op, fields, Caller{}, Params{})
		}
		if err != nil {
			ref, _ := RefusalOf(err)
			return wire.StatusError, wire.AppendErrorPayload(dst, ref)
		}
		return wire.StatusOk, dst
	}
}

// cannedHandler answers every LEASE with one fixed grant holding a real signed token and every
// RELEASE with an empty Ok, decoding nothing.
func cannedHandler(b *testing.B) frameHandler {
	s := rtScheduler(b, newEdSigner(b))
	grant, err := s.Lease(verbs.LeaseRequest{Fingerprint: "fp0", Key: fmt.Sprintf("%064x", 0)}, Params{})
	if err != nil {
		b.Fatal(err)
	}
	body := grant.Append(nil)
	return func(dst []byte, op wire.Op, _ []byte) (wire.Status, []byte) {
		if op == wire.OpLease {
			return wire.StatusOk, append(dst, body...)
		}
		return wire.StatusOk, dst
	}
}

// listen serves h on a loopback port until the benchmark ends.
func listen(b *testing.B, h frameHandler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go serveConn(nc, h)
		}
	}()
	return ln.Addr().String()
}

func serveConn(nc net.Conn, h frameHandler) {
	defer nc.Close()
	br := bufio.NewReader(nc)
	var hdr [wire.RequestHeaderLen]byte
	var payload, out []byte
	for {
		rh, err := wire.ReadRequestHeader(br, &hdr)
		if err != nil || rh.PayloadLen > 64<<10 {
			return
		}
		payload = slices.Grow(payload[:0], int(rh.PayloadLen))[:rh.PayloadLen]
		if _, err := io.ReadFull(br, payload); err != nil {
			return
		}
		var status wire.Status
		status, out = h(out[:0], rh.Op, payload)
		if wire.WriteReply(nc, status, out) != nil {
			return
		}
	}
}

// rtClient is one client: a LEASE connection and a RELEASE connection, fresh 64-hex keys.
func rtClient(b *testing.B, pb *testing.PB, addr string, next *atomic.Uint64) {
	leaseConn, leaseBuf := dialBench(b, addr)
	releaseConn, releaseBuf := dialBench(b, addr)
	defer leaseConn.Close()
	defer releaseConn.Close()
	codecs := wire.NewCodecList(wire.CodecZstd, wire.CodecLZ4)
	var payload, frame []byte
	for pb.Next() {
		key := fmt.Sprintf("%064x", next.Add(1))
		payload = verbs.LeaseRequest{Fingerprint: "fp0", Key: key, Codecs: codecs}.Append(payload[:0])
		body, err := rtExchange(leaseConn, leaseBuf, &frame, wire.OpLease, payload)
		if err != nil {
			b.Error(err)
			return
		}
		g, err := verbs.ParseLeaseGrant(body)
		if err != nil {
			b.Error(err)
			return
		}
		payload = verbs.ReleaseRequest{Token: g.Token, Key: key}.Append(payload[:0])
		if _, err := rtExchange(releaseConn, releaseBuf, &frame, wire.OpRelease, payload); err != nil {
			b.Error(err)
			return
		}
	}
}

func dialBench(b *testing.B, addr string) (net.Conn, *bufio.Reader) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	return nc, bufio.NewReader(nc)
}

// rtExchange sends one request built in *frame (reused) and reads its terminal reply.
func rtExchange(nc net.Conn, br *bufio.Reader, frame *[]byte, op wire.Op, payload []byte) ([]byte, error) {
	*frame = wire.AppendRequestHeader((*frame)[:0], wire.NewRequestHeader(op, uint32(len(payload))))
	*frame = append(*frame, payload...)
	if _, err := nc.Write(*frame); err != nil {
		return nil, fmt.Errorf("send %s: %w", op, err)
	}
	_, body, err := wire.ReadReply(br, op, wire.MaxReportReply, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return body, nil
}
