package netlab

import (
	"bufio"
	"context"
	"net"
	"testing"
	"time"
)

// TestDialReachesALoopbackServiceInsideAHost: a server bound to 127.0.0.1 inside a host is
// reached through Host.Dial (it is not reachable from this namespace's own loopback), and the
// dialling goroutine leaves this process's other goroutines in their namespace.
func TestDialReachesALoopbackServiceInsideAHost(t *testing.T) {
	_, hosts := ForTest(t, "a")
	startHelper(t, hosts[0], "serve-tcp", "127.0.0.1:47123", "inside-a")
	c, err := hosts[0].Dial(context.Background(), "tcp", "127.0.0.1:47123")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "hello from inside-a\n" {
		t.Fatalf("greeting %q, %v", line, err)
	}
	if here, err := net.DialTimeout("tcp", "127.0.0.1:47123", time.Second); err == nil {
		here.Close()
		t.Fatal("this namespace reached the host's loopback service")
	}
}
