package ccfront

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// The front's one exchange: a FETCH (pace-wire §1.13) on a blocking socket.
// Go's net package would register the socket with the runtime's poller, so that the reply
// wakes a poller thread which then wakes this goroutine; a blocking read is woken by the
// kernel directly. The frame codec is internal/pace/wire's; a test holds these few bytes to
// it (wire links a compressor this binary must not carry).

const (
	opFetch     = 0x02
	statusMiss  = 0x00
	statusOk    = 0x01
	statusError = 0x02
	maxValue    = 256 << 20 // wire.DefaultSessionCap: the largest FETCH reply accepted
	// readBuffer is the one buffer a value passes through on its way to the files: every
	// fresh page of a short-lived process's heap is a page fault.
	readBuffer = 16 << 10
)

var errRefused = errors.New("the cache refused the FETCH")

// fetchRequest is a whole FETCH frame for key: header (magic, version, op, payload length),
// then one field.
func fetchRequest(key string) []byte {
	b := []byte{0xFC, 1, opFetch}
	b = binary.BigEndian.AppendUint32(b, uint32(4+len(key)))
	b = binary.BigEndian.AppendUint32(b, uint32(len(key)))
	return append(b, key...)
}

// fetch asks the cache at addr for key and, on a hit, hands the value's n bytes to recv,
// which must read exactly them.
func fetch(c config, key string, recv func(body io.Reader, n uint32) error) (hit bool, err error) {
	fd, err := dial(c.addr, c.connectTimeout)
	if err != nil {
		return false, err
	}
	defer syscall.Close(fd)
	if err := setTimeout(fd, c.timeout); err != nil {
		return false, err
	}
	if _, err := (fdWriter(fd)).Write(fetchRequest(key)); err != nil {
		return false, fmt.Errorf("sending FETCH: %w", err)
	}
	return readReply(bufio.NewReaderSize(fdReader(fd), readBuffer), recv)
}

// readReply reads FETCH's one terminal reply: Miss with no payload, Ok with the value (handed
// to recv), or Error. Anything else — another status, a Miss with a payload, a value over the
// cap — is a broken exchange, judged before a byte of the payload is read.
func readReply(r io.Reader, recv func(body io.Reader, n uint32) error) (bool, error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return false, fmt.Errorf("reading the reply: %w", err)
	}
	n := binary.BigEndian.Uint32(h[1:])
	switch {
	case h[0] == statusMiss && n == 0:
		return false, nil
	case h[0] == statusOk && n <= maxValue:
		if err := recv(io.LimitReader(r, int64(n)), n); err != nil {
			return false, err
		}
		return true, nil
	case h[0] == statusError && n > 0:
		return false, errRefused
	}
	return false, fmt.Errorf("unexpected reply: status %d, %d bytes", h[0], n)
}

// dial connects a blocking TCP socket to addr, an IP literal with a port ("localhost" is taken
// as 127.0.0.1); a name to resolve is pace-cc-full's. The send timeout bounds the connect.
func dial(addr string, timeout time.Duration) (int, error) {
	if host, port, ok := strings.Cut(addr, ":"); ok && host == "localhost" {
		addr = "127.0.0.1:" + port
	}
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return -1, fmt.Errorf("cache address %q: %w", addr, err)
	}
	family, sa := syscall.AF_INET, syscall.Sockaddr(nil)
	if ip := ap.Addr(); ip.Is4() || ip.Is4In6() {
		sa = &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ip.Unmap().As4()}
	} else {
		family = syscall.AF_INET6
		sa = &syscall.SockaddrInet6{Port: int(ap.Port()), Addr: ip.As16()}
	}
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err = setTimeout(fd, timeout); err == nil {
		err = connect(fd, sa)
	}
	if err != nil {
		syscall.Close(fd)
		return -1, fmt.Errorf("connecting to %s: %w", addr, err)
	}
	return fd, nil
}

func connect(fd int, sa syscall.Sockaddr) error {
	for {
		if err := syscall.Connect(fd, sa); err != syscall.EINTR {
			return err
		}
	}
}

// setTimeout bounds every send and every receive on fd (0: no bound).
func setTimeout(fd int, d time.Duration) error {
	tv := syscall.NsecToTimeval(d.Nanoseconds())
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv); err != nil {
		return err
	}
	return syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
}

// fdReader reads a blocking descriptor; a receive timeout surfaces as EAGAIN.
type fdReader int

func (r fdReader) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(int(r), p)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}
