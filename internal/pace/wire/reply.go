package wire

import (
	"fmt"
	"io"
)

// ReadReply reads the replies to one request of op until the terminal one
// (pace-wire §1.5): Progress frames are drained, Push frames are read and
// handed to onPush (which may be nil to discard them). Every header is judged
// by CheckReplyHeader before its payload is allocated.
//
// It returns the terminal status and payload. An Error reply is returned
// as a Refusal error alongside its raw payload; a protocol failure (unknown
// or illegal status, oversize reply, malformed error payload) is an error
// wrapping the sentinel, after which the connection is out of sync.
func ReadReply(r io.Reader, op Op, clientCap uint32, onPush func(payload []byte) error) (Status, []byte, error) {
	info, ok := Lookup(op)
	if !ok {
		return 0, nil, fmt.Errorf("read reply: %s is not a live opcode", op)
	}
	var scratch [ReplyHeaderLen]byte
	for {
		h, err := ReadReplyHeader(r, &scratch)
		if err != nil {
			return 0, nil, fmt.Errorf("read reply header: %w", err)
		}
		if err := CheckReplyHeader(info, h, clientCap); err != nil {
			return 0, nil, err
		}
		if h.Status == StatusProgress {
			if err := Drain(r, uint64(h.PayloadLen)); err != nil {
				return 0, nil, fmt.Errorf("drain progress: %w", err)
			}
			continue
		}
		payload := make([]byte, h.PayloadLen)
		if _, err := io.ReadFull(r, payload); err != nil {
			return 0, nil, fmt.Errorf("read reply payload: %w", unexpected(err))
		}
		if h.Status == StatusPush {
			if err := pushTo(onPush, payload); err != nil {
				return 0, nil, err
			}
			continue
		}
		return h.Status, payload, terminalError(h.Status, payload)
	}
}

func pushTo(onPush func([]byte) error, payload []byte) error {
	if onPush == nil {
		return nil
	}
	return onPush(payload)
}

func terminalError(status Status, payload []byte) error {
	switch {
	case status == StatusError:
		r, err := ParseErrorPayload(payload)
		if err != nil {
			return err
		}
		return r
	case status == StatusMiss && len(payload) != 0:
		return malformed("Miss reply with a %d-byte payload", len(payload))
	}
	return nil
}
