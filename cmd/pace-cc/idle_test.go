package main

import (
	"encoding/binary"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
)

// closingProxy forwards 0xFC requests to upstream, one upstream connection per client, but
// drops a client connection instead of forwarding a STORE that arrives after the connection
// has already served a request: what a pace-node does to a connection idle for 5 s while a
// compile runs.
func closingProxy(t *testing.T, upstream string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go proxyConn(c, upstream)
		}
	}()
	return ln.Addr().String()
}

func proxyConn(c net.Conn, upstream string) {
	defer c.Close()
	up, err := net.Dial("tcp", upstream)
	if err != nil {
		return
	}
	defer up.Close()
	for served := 0; ; served++ {
		var h [7]byte
		if _, err := io.ReadFull(c, h[:]); err != nil {
			return
		}
		payload := make([]byte, binary.BigEndian.Uint32(h[3:]))
		if _, err := io.ReadFull(c, payload); err != nil || (h[2] == 0x01 && served > 0) {
			return
		}
		up.Write(append(h[:], payload...))
		var rh [5]byte
		if _, err := io.ReadFull(up, rh[:]); err != nil {
			return
		}
		reply := make([]byte, binary.BigEndian.Uint32(rh[1:]))
		if _, err := io.ReadFull(up, reply); err != nil {
			return
		}
		c.Write(append(rh[:], reply...))
	}
}

// TestStoreSurvivesAConnectionClosedDuringTheCompile: the miss's STORE goes out on a fresh
// connection when the one its lookups used was closed meanwhile, so the next run hits.
func TestStoreSurvivesAConnectionClosedDuringTheCompile(t *testing.T) {
	e, dir := newEnv(t), project(t)
	e.addr = closingProxy(t, e.addr)
	e.extra = []string{"PACE_VERBOSE=1"}
	args := []string{"gcc", "-O2", "-c", "hello.c", "-o", "hello.o"}
	if r := e.paceCC(dir, args...); r.status != 0 || e.lastOutcome() != "miss" || strings.Contains(r.stderr, "refused") ||
		strings.Contains(r.stderr, "not reached") {
		t.Fatalf("miss: status %d, outcome %s, stderr:\n%s", r.status, e.lastOutcome(), r.stderr)
	}
	if r := e.paceCC(dir, args...); r.status != 0 || e.lastOutcome() != "hit-direct" {
		t.Fatalf("after the miss: outcome %s, stderr:\n%s", e.lastOutcome(), r.stderr)
	}
	plain(t, dir, "gcc", "-O2", "-c", "hello.c", "-o", "plain.o")
	sameBytes(t, filepath.Join(dir, "hello.o"), filepath.Join(dir, "plain.o"))
}
