package wire

import (
	"bytes"
	"testing"
	"unsafe"
)

// aliases reports whether sub lies inside frame's memory.
func aliases(frame, sub []byte) bool {
	if len(sub) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(frame)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(sub)))
	return p >= start && p+uintptr(len(sub)) <= start+uintptr(len(frame))
}

// Chunk payloads reach handlers as sub-slices of the frame, without a copy
// (gradient-protocol §1.5), and their capacity ends with the payload so an append cannot
// clobber the next field.
func TestChunkPayloadsAliasTheFrame(t *testing.T) {
	payload := bytes.Repeat([]byte{0xab}, 4096)
	tests := []struct {
		name string
		msg  Message
		data func(Message) []byte
	}{
		{"NarPush", &NarPush{JobID: "j", StorePath: "/nix/store/x", Data: payload, Offset: 7},
			func(m Message) []byte { return m.(*NarPush).Data }},
		{"EvalCacheChunk", &EvalCacheChunk{JobID: "j", Data: payload, IsFinal: true},
			func(m Message) []byte { return m.(*EvalCacheChunk).Data }},
		{"UploadChunk", &UploadChunk{RequestID: 1, Data: payload, Offset: 9},
			func(m Message) []byte { return m.(*UploadChunk).Data }},
		{"LogChunk", &LogChunk{JobID: "j", Data: payload},
			func(m Message) []byte { return m.(*LogChunk).Data }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			frame, err := Encode(tc.msg, 30)
			if err != nil {
				t.Fatal(err)
			}
			var back Message
			if _, ok := tc.msg.(ServerMessage); ok {
				back, err = DecodeServerMessage(frame, 30)
			} else {
				back, err = DecodeClientMessage(frame, 30)
			}
			if err != nil {
				t.Fatal(err)
			}
			data := tc.data(back)
			if !bytes.Equal(data, payload) {
				t.Fatal("payload differs")
			}
			if !aliases(frame, data) {
				t.Error("payload was copied; want a sub-slice of the frame")
			}
			if cap(data) != len(data) {
				t.Errorf("payload cap %d > len %d: an append would overwrite the next field", cap(data), len(data))
			}
		})
	}
}

// Strings are copied, so a long-lived job ID does not pin a 512 KiB frame in memory.
func TestStringsDoNotAliasTheFrame(t *testing.T) {
	frame, _ := Encode(&AbortJob{JobID: "job-1", Reason: "r"}, 30)
	m, err := DecodeServerMessage(frame, 30)
	if err != nil {
		t.Fatal(err)
	}
	id := m.(*AbortJob).JobID
	if aliases(frame, unsafe.Slice(unsafe.StringData(id), len(id))) {
		t.Error("JobID aliases the frame")
	}
}
