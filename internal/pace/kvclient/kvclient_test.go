package kvclient

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// memCache is a tiny cache surface for exercising the client over real TCP.
type memCache struct {
	mu       sync.Mutex
	values   map[string][]byte
	password string // "" = no auth (answers AUTH unknown-opcode, like a node tier)
}

func (m *memCache) Serve(_ context.Context, c *frameserver.Conn, req *frameserver.Request) frameserver.Reply {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch req.Op() {
	case wire.OpAuth:
		if m.password == "" {
			return frameserver.RefuseCode(wire.CodeUnknownOpcode)
		}
		if string(req.Fields[2]) != m.password {
			return frameserver.Refuse(wire.Refuse(wire.CodeUnauthenticated, "authentication failed"))
		}
		c.SetAuthenticated(true)
		return frameserver.Ok(nil)
	case wire.OpFetch:
		if v, ok := m.values[string(req.Fields[0])]; ok {
			return frameserver.Ok(v)
		}
		return frameserver.Miss()
	case wire.OpStore:
		m.values[string(req.Fields[0])] = append([]byte(nil), req.Fields[4]...)
		return frameserver.Ok(nil)
	case wire.OpCacheDrop:
		if _, ok := m.values[string(req.Fields[0])]; ok {
			delete(m.values, string(req.Fields[0]))
			return frameserver.Ok(nil)
		}
		return frameserver.Miss()
	}
	return frameserver.RefuseCode(wire.CodeUnknownOpcode)
}

func serve(t *testing.T, m *memCache) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := frameserver.Config{Handler: m}
	if m.password != "" {
		cfg.CredentialRequired = func() bool { return true }
	}
	srv, err := frameserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

func TestStoreFetchDropRoundTrip(t *testing.T) {
	opts := Options{Addr: serve(t, &memCache{values: map[string][]byte{}}), Timeout: 5 * time.Second}
	ctx := context.Background()
	if _, hit, err := Fetch(ctx, opts, "k"); hit || err != nil {
		t.Fatalf("fetch before store: hit=%v err=%v", hit, err)
	}
	big := bytes.Repeat([]byte("v"), 300<<10)
	if err := Store(ctx, opts, "k", StoreArgs{PrefetchGroup: "g"}, big); err != nil {
		t.Fatal(err)
	}
	v, hit, err := Fetch(ctx, opts, "k")
	if !hit || err != nil || !bytes.Equal(v, big) {
		t.Fatalf("fetch after store: hit=%v err=%v len=%d", hit, err, len(v))
	}
	c, err := Dial(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if was, err := c.Drop(ctx, "k"); !was || err != nil {
		t.Fatalf("drop: %v %v", was, err)
	}
	if was, err := c.Drop(ctx, "k"); was || err != nil {
		t.Fatalf("second drop: %v %v", was, err)
	}
}

func TestPipelinedAuth(t *testing.T) {
	m := &memCache{values: map[string][]byte{"k": []byte("v")}, password: "s3cret"}
	addr := serve(t, m)
	ctx := context.Background()
	if v, hit, err := Fetch(ctx, Options{Addr: addr, Password: "s3cret"}, "k"); !hit || err != nil || string(v) != "v" {
		t.Fatalf("right password: %q %v %v", v, hit, err)
	}
	_, hit, err := Fetch(ctx, Options{Addr: addr, Password: "wrong"}, "k")
	var ae *AuthError
	if hit || !errors.As(err, &ae) || ae.Refusal.Code != wire.CodeUnauthenticated {
		t.Fatalf("wrong password: hit=%v err=%v", hit, err)
	}
	_, _, err = Fetch(ctx, Options{Addr: addr}, "k")
	var r wire.Refusal
	if !errors.As(err, &r) || r.Code != wire.CodeUnauthenticated {
		t.Fatalf("no password: %v", err)
	}
}

func TestAuthToACacheWithoutAuthIsIgnored(t *testing.T) {
	addr := serve(t, &memCache{values: map[string][]byte{"k": []byte("v")}})
	v, hit, err := Fetch(context.Background(), Options{Addr: addr, Password: "unused"}, "k")
	if !hit || err != nil || string(v) != "v" {
		t.Fatalf("%q %v %v", v, hit, err)
	}
}

func TestUnreachableIsUnavailable(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	if _, _, err := Fetch(context.Background(), Options{Addr: addr, ConnectTimeout: time.Second}, "k"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
}

func TestSilentServerTimesOutAsUnavailable(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // hold it open, say nothing
		}
	}()
	start := time.Now()
	_, _, err := Fetch(context.Background(), Options{Addr: l.Addr().String(), Timeout: 200 * time.Millisecond}, "k")
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("timeout not applied")
	}
}

func TestGarbageSpeakingServerIsUnavailable(t *testing.T) {
	for name, answer := range map[string][]byte{
		"unknown status":   {0x7f, 0, 0, 0, 0},
		"illegal status":   {byte(wire.StatusPush), 0, 0, 0, 0},
		"http":             []byte("HTTP/1.1 400 Bad Request\r\n\r\n"),
		"oversize":         {byte(wire.StatusOk), 0xff, 0xff, 0xff, 0xff},
		"truncated":        {byte(wire.StatusOk), 0, 0, 0, 9, 'a'},
		"miss with a body": {byte(wire.StatusMiss), 0, 0, 0, 1, 'x'},
	} {
		t.Run(name, func(t *testing.T) {
			l, _ := net.Listen("tcp", "127.0.0.1:0")
			defer l.Close()
			go func() {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Write(answer)
				c.Close()
			}()
			_, hit, err := Fetch(context.Background(), Options{Addr: l.Addr().String(), Timeout: 2 * time.Second, MaxValue: 1 << 20}, "k")
			if hit || !errors.Is(err, ErrUnavailable) {
				t.Fatalf("hit=%v err=%v", hit, err)
			}
		})
	}
}

func TestPersistentConnectionReusesBuffers(t *testing.T) {
	addr := serve(t, &memCache{values: map[string][]byte{"k": bytes.Repeat([]byte("x"), 4096)}})
	c, err := Dial(context.Background(), Options{Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 0, 8192)
	for i := 0; i < 100; i++ {
		out, hit, err := c.FetchAppend(context.Background(), buf[:0], "k")
		if !hit || err != nil || len(out) != 4096 || &out[0] != &buf[:1][0] {
			t.Fatalf("iteration %d: hit=%v err=%v len=%d reused=%v", i, hit, err, len(out), len(out) > 0 && &out[0] == &buf[:1][0])
		}
	}
}

func TestFetchStreamHandsTheValueOverWithoutBufferingIt(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789"), 100000)
	addr := serve(t, &memCache{values: map[string][]byte{"k": big}})
	c, err := Dial(context.Background(), Options{Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got bytes.Buffer
	hit, err := c.FetchStream(context.Background(), "k", func(r io.Reader, n uint32) error {
		if int(n) != len(big) {
			t.Errorf("n = %d", n)
		}
		_, err := io.CopyN(&got, r, 10) // read a little, leave the rest to be drained
		return err
	})
	if !hit || err != nil || got.String() != "0123456789" {
		t.Fatalf("hit=%v err=%v got %q", hit, err, got.String())
	}
	// The connection is still in step: a miss and then the value again.
	if hit, err := c.FetchStream(context.Background(), "absent", nil); hit || err != nil {
		t.Fatalf("miss: %v %v", hit, err)
	}
	v, hit, err := c.FetchAppend(context.Background(), nil, "k")
	if !hit || err != nil || !bytes.Equal(v, big) {
		t.Fatalf("after streaming: %v %v", hit, err)
	}
}
