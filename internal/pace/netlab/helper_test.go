package netlab

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// helperEnv, when set, makes the test binary a helper process instead of running tests: the
// programs the tests start inside hosts are this binary, so no other package is needed.
const helperEnv = "NETLAB_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(helperMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// helperMain runs one helper: serve-tcp ADDR NAME, dial-tcp ADDR, recv-udp PORT..., sleep, or
// own-lab. Servers print "ready" once they listen, then run until killed.
func helperMain(args []string) int {
	var err error
	switch args[0] {
	case "serve-tcp":
		err = serveTCP(args[1], args[2])
	case "dial-tcp":
		err = dialTCP(args[1])
	case "recv-udp":
		err = recvUDP(args[1:])
	case "sleep":
		fmt.Println("ready")
		sleepUntilKilled()
	case "own-lab":
		err = ownLab()
	default:
		err = fmt.Errorf("unknown helper %q", args[0])
	}
	fmt.Fprintln(os.Stderr, "helper:", err)
	return 1
}

// sleepUntilKilled blocks until a signal ends the process. A bare select{} would not do: with
// no other goroutine and no timer the runtime calls it a deadlock and exits 2.
func sleepUntilKilled() {
	for {
		time.Sleep(time.Hour)
	}
}

// serveTCP greets every connection with "hello from NAME".
func serveTCP(addr, name string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Println("ready")
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		fmt.Fprintf(c, "hello from %s\n", name)
		c.Close()
	}
}

// dialTCP prints the greeting of the server at addr and exits 0, or fails within a second.
func dialTCP(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	fmt.Print(line)
	os.Exit(0)
	return nil
}

// recvUDP prints "port=P from=IP PAYLOAD" for every datagram to one of ports.
func recvUDP(ports []string) error {
	for _, p := range ports {
		c, err := net.ListenPacket("udp4", ":"+p)
		if err != nil {
			return err
		}
		go func() {
			buf := make([]byte, 1500)
			for {
				n, from, err := c.ReadFrom(buf)
				if err != nil {
					return
				}
				fmt.Printf("port=%s from=%s %s\n", p, from.(*net.UDPAddr).IP, buf[:n])
			}
		}()
	}
	fmt.Println("ready")
	sleepUntilKilled()
	return nil
}

// ownLab makes a lab owned by this process, prints its namespaces after "ready" and waits to
// be killed.
func ownLab() error {
	l, err := New(Options{})
	if err != nil {
		return err
	}
	h, err := l.AddHost("a")
	if err != nil {
		return err
	}
	fmt.Println("ready")
	fmt.Println(bridgeNS(l.id), h.Namespace())
	sleepUntilKilled()
	return nil
}

// helper is a helper process whose output lines the test reads.
type helper struct {
	cmd    *exec.Cmd
	lines  chan string
	exited chan error // Wait's answer, once the process has ended
}

// startHelper runs a helper inside host (nil: in this namespace) and waits for its "ready".
// It is killed when the test ends.
func startHelper(t *testing.T, host *Host, args ...string) *helper {
	t.Helper()
	h := newHelper(t, host, args...)
	out, err := h.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Start(); err != nil {
		t.Fatalf("starting helper %v: %v", args, err)
	}
	t.Cleanup(func() { h.cmd.Process.Kill(); <-h.exited })
	go func() {
		for s := bufio.NewScanner(out); s.Scan(); {
			h.lines <- s.Text()
		}
		close(h.lines)
		h.exited <- h.cmd.Wait()
		close(h.exited)
	}()
	if line, ok := h.next(5 * time.Second); line != "ready" {
		h.cmd.Process.Kill()
		<-h.exited // its standard error is complete only then
		t.Fatalf("helper %v: want ready, got %q (open %v); stderr: %s", args, line, ok, h.cmd.Stderr)
	}
	return h
}

// newHelper prepares a helper process.
func newHelper(t *testing.T, host *Host, args ...string) *helper {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cmd := exec.CommandContext(ctx, self, args...)
	if host != nil {
		cmd = host.Command(ctx, self, args...)
	}
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	cmd.Stderr = &strings.Builder{}
	return &helper{cmd: cmd, lines: make(chan string, 64), exited: make(chan error, 1)}
}

// killed reports whether the helper ended by a signal within timeout.
// killed waits up to timeout for the helper to end by a signal; otherwise it says how it
// ended, or that it did not.
func (h *helper) killed(timeout time.Duration) error {
	select {
	case err, open := <-h.exited:
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit) && !exit.Exited():
			return nil
		case !open:
			return errors.New("its end was already read")
		}
		return fmt.Errorf("it ended by itself (%v); stderr: %s", err, h.cmd.Stderr)
	case <-time.After(timeout):
		return fmt.Errorf("it was still running after %v", timeout)
	}
}

// next is the helper's next line, or "" and false after timeout or at its end.
func (h *helper) next(timeout time.Duration) (string, bool) {
	select {
	case line, ok := <-h.lines:
		return line, ok
	case <-time.After(timeout):
		return "", false
	}
}
