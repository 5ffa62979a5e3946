package loghub

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"
)

const uuidText = "0190b5e2-7c1a-7d3e-9f00-1234567890ab"

func TestParseEventID(t *testing.T) {
	cases := []struct {
		in      string
		attempt string
		offset  int64
		ok      bool
	}{
		{"0", "", 0, true},
		{"1234", "", 1234, true},
		{uuidText + ":77", uuidText, 77, true},
		{"a:4611686018427387904", "a", MaxOffset, true},
		{"a:4611686018427387905", "", 0, false},
		{"99999999999999999999", "", 0, false},
		{"", "", 0, false},
		{":5", "", 0, false},
		{"a:", "", 0, false},
		{"a:-1", "", 0, false},
		{"a:+1", "", 0, false},
		{"a: 1", "", 0, false},
		{"a b:1", "", 0, false},
		{"a:b:1", "", 0, false},
		{strings.Repeat("a", 65) + ":1", "", 0, false},
		{"0x10", "", 0, false},
	}
	for _, c := range cases {
		attempt, offset, err := ParseEventID(c.in)
		if (err == nil) != c.ok || attempt != c.attempt || offset != c.offset {
			t.Errorf("ParseEventID(%q) = %q, %d, %v; want %q, %d, ok %v", c.in, attempt, offset, err, c.attempt, c.offset, c.ok)
		}
		if err != nil && !errors.Is(err, ErrEventID) {
			t.Errorf("ParseEventID(%q) error %v is not ErrEventID", c.in, err)
		}
	}
}

func TestEventIDRoundTrips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		attempt := rapid.StringMatching(`[0-9a-zA-Z-]{1,64}`).Draw(t, "attempt")
		offset := rapid.Int64Range(0, MaxOffset).Draw(t, "offset")
		a, o, err := ParseEventID(EventID(attempt, offset))
		if err != nil || a != attempt || o != offset {
			t.Fatalf("round trip of %q %d: %q %d %v", attempt, offset, a, o, err)
		}
	})
}

func FuzzParseEventID(f *testing.F) {
	for _, s := range []string{"0", uuidText + ":123", "a:b:1", ":", "-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		attempt, offset, err := ParseEventID(s)
		if err != nil {
			return
		}
		if offset < 0 || offset > MaxOffset || len(attempt) > maxAttemptID {
			t.Fatalf("ParseEventID(%q) = %q, %d", s, attempt, offset)
		}
		if attempt != "" {
			if a, o, err := ParseEventID(EventID(attempt, offset)); err != nil || a != attempt || o != offset {
				t.Fatalf("re-parse of %q failed", s)
			}
		}
	})
}

func TestEncoderEvents(t *testing.T) {
	cases := []struct {
		name   string
		chunks []string
		want   string
	}{
		{"lines", []string{"one\ntwo\n"}, "id: a:8\ndata: one\ndata: two\ndata: \n\n"},
		{"no break", []string{"x"}, "id: a:1\ndata: x\n\n"},
		{"CRLF across chunks", []string{"p\r", "\nq"}, "id: a:1\ndata: p\n\nid: a:4\ndata: \ndata: q\n\n"},
		{"character across chunks", []string{"\xc3", "\xa9!"}, "id: a:3\ndata: é!\n\n"},
		{"held until flush", []string{"ab\xe2\x82"}, "id: a:2\ndata: ab\n\nid: a:4\ndata: \xe2\x82\n\n"},
		{"empty", []string{""}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := NewEncoder("a", 0)
			var out []byte
			for _, ch := range c.chunks {
				out = e.Data(out, []byte(ch))
			}
			out = e.Flush(out)
			if string(out) != c.want {
				t.Errorf("events\n%q\nwant\n%q", out, c.want)
			}
			if e.Sent() != e.Received() {
				t.Errorf("sent %d, received %d after Flush", e.Sent(), e.Received())
			}
		})
	}
}

// Encoded chunks decode to the log with its line breaks as "\n", every event whole UTF-8
// when the log is, and the last id the log's length.
func TestEncodedLogDecodesBack(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := rapid.StringOf(rapid.SampledFrom([]rune{'a', 'é', '€', '😀', '\n', '\r', ' '})).Draw(t, "log")
		cuts := rapid.SliceOfN(rapid.IntRange(0, len(text)), 0, 8).Draw(t, "cuts")
		e := NewEncoder(uuidText, 10)
		var stream []byte
		prev := 0
		for _, c := range append(sortedInts(cuts), len(text)) {
			stream = e.Data(stream, []byte(text[prev:c]))
			prev = c
		}
		stream = e.Flush(stream)
		r := NewReader(bytes.NewReader(stream), 1<<20)
		var got strings.Builder
		for {
			ev, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if !utf8.ValidString(ev.Data) {
				t.Fatalf("event data %q is not UTF-8", ev.Data)
			}
			got.WriteString(ev.Data)
		}
		want := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(text)
		if got.String() != want {
			t.Fatalf("decoded %q, want %q", got.String(), want)
		}
		if wantID := EventID(uuidText, 10+int64(len(text))); len(text) > 0 && r.LastID() != wantID {
			t.Fatalf("last id %q, want %q", r.LastID(), wantID)
		}
	})
}

func sortedInts(v []int) []int {
	out := append([]int(nil), v...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestReader(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []Event
		err  error
	}{
		{"message and named", "id: 1\ndata: a\ndata: b\n\nevent: end\ndata: {}\n\n",
			[]Event{{"", "1", "a\nb"}, {"end", "1", "{}"}}, io.EOF},
		{"comments and other fields", ": keep-alive\nretry: 10\nfoo\ndata:x\n\n", []Event{{"", "", "x"}}, io.EOF},
		{"CR and CRLF breaks", "data: a\rdata: b\r\n\r\n", []Event{{"", "", "a\nb"}}, io.EOF},
		{"byte-order mark", "\xef\xbb\xbfdata: a\n\n", []Event{{"", "", "a"}}, io.EOF},
		{"name without data", "event: end\n\ndata: a\n\n", []Event{{"", "", "a"}}, io.EOF},
		{"id with NUL ignored", "id: 5\n\nid: a\x00b\ndata: z\n\n", []Event{{"", "5", "z"}}, io.EOF},
		{"cut short", "data: a\n\ndata: b\n", []Event{{"", "", "a"}}, io.EOF},
		{"line too long", "data: " + strings.Repeat("x", 40) + "\n\n", nil, ErrTooLong},
		{"event too long", strings.Repeat("data: 0123456789\n", 4) + "\n", nil, ErrTooLong},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(c.in), 32)
			var got []Event
			var err error
			for {
				var ev Event
				if ev, err = r.Next(); err != nil {
					break
				}
				got = append(got, ev)
			}
			if !errors.Is(err, c.err) || len(got) != len(c.want) {
				t.Fatalf("events %+v, err %v; want %+v, %v", got, err, c.want, c.err)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("event %d: %+v, want %+v", i, got[i], c.want[i])
				}
			}
		})
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("id: a:1\ndata: x\n\nevent: end\ndata: {}\n\n"))
	f.Add([]byte("\xef\xbb\xbf: c\r\ndata\rdata: \r\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewReader(bytes.NewReader(in), 64)
		for i := 0; i <= len(in); i++ {
			ev, err := r.Next()
			if err != nil {
				return
			}
			if len(ev.Data) > 64 {
				t.Fatalf("event data of %d bytes past the bound", len(ev.Data))
			}
		}
		t.Fatal("more events than input bytes")
	})
}
