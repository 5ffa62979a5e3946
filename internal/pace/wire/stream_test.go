package wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReadRequestHeaderEnds(t *testing.T) {
	var scratch [RequestHeaderLen]byte
	if _, err := ReadRequestHeader(bytes.NewReader(nil), &scratch); err != io.EOF {
		t.Fatalf("clean end: %v, want io.EOF", err)
	}
	if _, err := ReadRequestHeader(bytes.NewReader([]byte{0xFC, 1, 2}), &scratch); err != io.ErrUnexpectedEOF {
		t.Fatalf("partial header: %v, want io.ErrUnexpectedEOF", err)
	}
	frame := AppendRequest(nil, OpFetch, []byte("k"))
	h, err := ReadRequestHeader(bytes.NewReader(frame), &scratch)
	if err != nil || h != NewRequestHeader(OpFetch, 5) {
		t.Fatalf("header %+v, %v", h, err)
	}
}

// plainReader hides bufio's Discard so Drain takes its generic path.
type plainReader struct{ r io.Reader }

func (p plainReader) Read(b []byte) (int, error) { return p.r.Read(b) }

func TestDrain(t *testing.T) {
	for _, wrap := range []struct {
		name string
		mk   func(io.Reader) io.Reader
	}{
		{"bufio", func(r io.Reader) io.Reader { return bufio.NewReaderSize(r, 4096) }},
		{"plain", func(r io.Reader) io.Reader { return plainReader{r} }},
	} {
		t.Run(wrap.name, func(t *testing.T) {
			data := append(bytes.Repeat([]byte{'x'}, 1<<20+17), "next"...)
			r := wrap.mk(bytes.NewReader(data))
			if err := Drain(r, 1<<20+17); err != nil {
				t.Fatal(err)
			}
			rest, _ := io.ReadAll(r)
			if string(rest) != "next" {
				t.Fatalf("after drain read %q: drained the wrong number of bytes", rest)
			}
			if err := Drain(wrap.mk(bytes.NewReader(data[:10])), 11); err != io.ErrUnexpectedEOF {
				t.Fatalf("short drain: %v", err)
			}
		})
	}
}

func TestWriteReplyVariants(t *testing.T) {
	var a, b, c bytes.Buffer
	if err := WriteReply(&a, StatusOk, []byte("value")); err != nil {
		t.Fatal(err)
	}
	if err := WriteReplyBody(&b, StatusOk, 5, strings.NewReader("value and more")); err != nil {
		t.Fatal(err)
	}
	c.Write(AppendReply(nil, StatusOk, []byte("value")))
	if a.String() != "\x01\x00\x00\x00\x05value" || a.String() != b.String() || a.String() != c.String() {
		t.Fatalf("replies differ: %q %q %q", a.Bytes(), b.Bytes(), c.Bytes())
	}
	err := WriteReplyBody(io.Discard, StatusOk, 10, strings.NewReader("short"))
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("short body: %v", err)
	}
	r := AppendRefusalReply(nil, Refusal{Code: CodeUnknownOpcode})
	if string(r) != "\x02\x00\x00\x00\x0f\x02unknown opcode" {
		t.Fatalf("refusal reply %q", r)
	}
}

func TestReadReply(t *testing.T) {
	progress := AppendReply(nil, StatusProgress, nil)
	push := AppendReply(nil, StatusPush, []byte("tick"))
	ok := AppendReply(nil, StatusOk, []byte("obj"))
	tests := []struct {
		name    string
		op      Op
		stream  []byte
		status  Status
		payload string
		pushes  int
		wantErr error
	}{
		{"ok", OpFetch, ok, StatusOk, "obj", 0, nil},
		{"miss", OpFetch, AppendReply(nil, StatusMiss, nil), StatusMiss, "", 0, nil},
		{"progress then ok", OpCompile, bytes.Join([][]byte{progress, progress, ok}, nil), StatusOk, "obj", 0, nil},
		{"push then ok", OpSubscribe, bytes.Join([][]byte{push, push, ok}, nil), StatusOk, "obj", 2, nil},
		{"refusal", OpStore, AppendRefusalReply(nil, Refusal{Code: CodeStorageWriteFailed}), StatusError, "", 0, Refusal{CodeStorageWriteFailed, "storage refused the write"}},
		{"progress on fetch is illegal", OpFetch, append(progress, ok...), 0, "", 0, ErrIllegalStatus},
		{"miss on store is illegal", OpStore, AppendReply(nil, StatusMiss, nil), 0, "", 0, ErrIllegalStatus},
		{"unknown status", OpFetch, []byte{9, 0, 0, 0, 0}, 0, "", 0, ErrUnknownStatus},
		{"auth reply over 64 KiB", OpAuth, AppendReplyHeader(nil, ReplyHeader{StatusOk, MaxRefusalReply + 1}), 0, "", 0, ErrReplyTooLarge},
		{"fetch over the client cap", OpFetch, AppendReplyHeader(nil, ReplyHeader{StatusOk, 1001}), 0, "", 0, ErrReplyTooLarge},
		{"empty error payload", OpFetch, AppendReply(nil, StatusError, nil), StatusError, "", 0, ErrMalformedFrame},
		{"miss with payload", OpFetch, AppendReply(nil, StatusMiss, []byte("x")), StatusMiss, "x", 0, ErrMalformedFrame},
		{"truncated payload", OpFetch, ok[:6], 0, "", 0, io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pushes := 0
			status, payload, err := ReadReply(bytes.NewReader(tt.stream), tt.op, 1000, func([]byte) error { pushes++; return nil })
			var wantRefusal Refusal
			switch {
			case errors.As(tt.wantErr, &wantRefusal):
				if got, isRefusal := err.(Refusal); !isRefusal || got != wantRefusal {
					t.Fatalf("err %v, want refusal %v", err, wantRefusal)
				}
			case !errors.Is(err, tt.wantErr):
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && (status != tt.status || string(payload) != tt.payload || pushes != tt.pushes) {
				t.Fatalf("got %s %q %d pushes", status, payload, pushes)
			}
		})
	}
}
