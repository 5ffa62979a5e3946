package wire

import (
	"errors"
	"testing"

	"pgregory.net/rapid"
)

func TestParseRequestHeader(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		want    RequestHeader
		wantErr error
	}{
		{"fetch", []byte{0xFC, 1, 0x02, 0, 0, 0, 9}, RequestHeader{0xFC, 1, OpFetch, 9}, nil},
		{"big-endian length", []byte{0xFC, 1, 0x01, 0x01, 0x02, 0x03, 0x04}, RequestHeader{0xFC, 1, OpStore, 0x01020304}, nil},
		{"max length", []byte{0xFC, 1, 0x07, 0xFF, 0xFF, 0xFF, 0xFF}, RequestHeader{0xFC, 1, OpCompile, 0xFFFFFFFF}, nil},
		{"magic judged later", []byte{'G', 'E', 'T', ' ', '/', ' ', 'H'}, RequestHeader{'G', 'E', 'T', 0x202F2048}, nil},
		{"extra bytes ignored", []byte{0xFC, 1, 0x03, 0, 0, 0, 0, 0xAA}, RequestHeader{0xFC, 1, OpAuth, 0}, nil},
		{"six bytes", []byte{0xFC, 1, 0x02, 0, 0, 0}, RequestHeader{}, ErrShortHeader},
		{"empty", nil, RequestHeader{}, ErrShortHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRequestHeader(tt.in)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("ParseRequestHeader(% x) = %+v, %v; want %+v, %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestParseReplyHeader(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		want    ReplyHeader
		wantErr error
	}{
		{"miss", []byte{0, 0, 0, 0, 0}, ReplyHeader{StatusMiss, 0}, nil},
		{"ok", []byte{1, 0, 1, 0, 0}, ReplyHeader{StatusOk, 65536}, nil},
		{"error", []byte{2, 0, 0, 0, 3}, ReplyHeader{StatusError, 3}, nil},
		{"progress", []byte{3, 0, 0, 0, 0}, ReplyHeader{StatusProgress, 0}, nil},
		{"push", []byte{4, 0, 0, 0, 7}, ReplyHeader{StatusPush, 7}, nil},
		{"unknown status", []byte{5, 0, 0, 0, 0}, ReplyHeader{Status(5), 0}, ErrUnknownStatus},
		{"status 0xFF", []byte{0xFF, 0, 0, 0, 0}, ReplyHeader{Status(0xFF), 0}, ErrUnknownStatus},
		{"four bytes", []byte{1, 0, 0, 0}, ReplyHeader{}, ErrShortHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseReplyHeader(tt.in)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("ParseReplyHeader(% x) = %+v, %v; want %+v, %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestStatusTerminal(t *testing.T) {
	terminal := map[Status]bool{StatusMiss: true, StatusOk: true, StatusError: true, StatusProgress: false, StatusPush: false}
	for s, want := range terminal {
		if s.Terminal() != want || !s.Known() {
			t.Errorf("%s: Terminal()=%v Known()=%v, want %v true", s, s.Terminal(), s.Known(), want)
		}
	}
	if Status(5).Known() || Statuses(StatusOk).Has(Status(9)) {
		t.Error("status 5 must be unknown and in no set")
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		req := RequestHeader{
			Magic:      rapid.Byte().Draw(t, "magic"),
			Version:    rapid.Uint8().Draw(t, "version"),
			Op:         Op(rapid.Uint8().Draw(t, "op")),
			PayloadLen: rapid.Uint32().Draw(t, "len"),
		}
		b := AppendRequestHeader(nil, req)
		if len(b) != RequestHeaderLen {
			t.Fatalf("request header is %d bytes", len(b))
		}
		if got, err := ParseRequestHeader(b); err != nil || got != req {
			t.Fatalf("request round trip: %+v, %v; want %+v", got, err, req)
		}
		rep := ReplyHeader{Status: Status(rapid.Uint8Max(4).Draw(t, "status")), PayloadLen: rapid.Uint32().Draw(t, "rlen")}
		rb := AppendReplyHeader(nil, rep)
		var put [ReplyHeaderLen]byte
		PutReplyHeader(put[:], rep)
		if string(put[:]) != string(rb) {
			t.Fatalf("PutReplyHeader % x != AppendReplyHeader % x", put, rb)
		}
		if got, err := ParseReplyHeader(rb); err != nil || got != rep {
			t.Fatalf("reply round trip: %+v, %v; want %+v", got, err, rep)
		}
	})
}
