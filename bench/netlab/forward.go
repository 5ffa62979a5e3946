package main

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/buildfleet/buildfleet/internal/pace/netlab"
)

// forward lets this machine's own namespace reach a service inside a lab host (the demo's
// dashboard URL): it prints "listen=127.0.0.1:<port>" and carries every connection there to
// TO, dialled inside HOST.
func forward(name string, args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("forward takes HOST and TO\n%s", usage)
	}
	l, err := netlab.Open(name)
	if err != nil {
		return err
	}
	h := l.Host(args[0])
	if h == nil {
		return fmt.Errorf("lab %s has no host %q", name, args[0])
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("listen=%s\n", ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go carry(c, h, args[1])
	}
}

func carry(c net.Conn, h *netlab.Host, to string) {
	defer c.Close()
	up, err := h.DialContext(context.Background(), "tcp", to)
	if err != nil {
		return
	}
	defer up.Close()
	go func() { io.Copy(up, c); up.Close() }()
	io.Copy(c, up)
}
