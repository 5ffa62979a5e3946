package ccstats

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

const (
	// MaxLineBytes is the longest log line read; a record is a few hundred bytes, so a longer
	// line is damage and is counted unreadable without being held.
	MaxLineBytes = 64 << 10
	// MaxReasons bounds the reasons table; reasons beyond it are counted under OtherReasons.
	MaxReasons = 64
	// maxReasonBytes bounds one reason's text in the table.
	maxReasonBytes = 96
	// OtherReasons is the reasons row that gathers reasons past MaxReasons.
	OtherReasons = "(other reasons)"
)

// ErrLineTooLong reports a log line longer than MaxLineBytes.
var ErrLineTooLong = errors.New("statistics line too long")

// Summary is the fold of a log. Every table in it is bounded: dispatch causes by the cause
// vocabulary, reasons by MaxReasons, latencies by their fixed histograms.
type Summary struct {
	Invocations   int
	Hits          int
	HitsDirect    int
	HitsPrepro    int
	HitsListing   int // dependency listings (gcc -M/-MM) served, pace-wire §3.6.2
	Misses        int
	Uncacheable   int
	Passthrough   int
	Unavailable   int
	Fallbacks     int
	CompileFailed int
	OtherOutcomes int // an outcome this build does not know
	Unreadable    int // lines that did not parse (a torn line from a crashed writer, say)
	Reasons       map[string]int
	Dispatch      map[Cause]int
	// Latencies: hit and miss totals of every such invocation; the others of the invocations
	// that spent time there (a direct hit runs no preprocessor).
	HitMS, MissMS, PreprocessMS, LookupMS, StoreMS, CacheMS Latency
}

// NewSummary is an empty summary.
func NewSummary() Summary {
	return Summary{Reasons: map[string]int{}, Dispatch: map[Cause]int{}}
}

// Read folds the log in dir. A missing log is an empty summary.
func Read(dir string) (Summary, error) {
	f, err := os.Open(filepath.Join(dir, LogName))
	if os.IsNotExist(err) {
		return NewSummary(), nil
	}
	if err != nil {
		return NewSummary(), fmt.Errorf("statistics log: %w", err)
	}
	defer f.Close()
	return Fold(f)
}

// Fold reads a log line by line, holding one line at a time.
func Fold(r io.Reader) (Summary, error) {
	s := NewSummary()
	br := bufio.NewReaderSize(r, MaxLineBytes+1)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			s.Unreadable++
			if err = skipLine(br); err == io.EOF {
				return s, nil
			}
		} else if len(line) > 0 {
			s.AddLine(line)
		}
		if err == io.EOF {
			return s, nil
		}
		if err != nil {
			return s, fmt.Errorf("statistics log: %w", err)
		}
	}
}

// skipLine discards the rest of an overlong line.
func skipLine(br *bufio.Reader) error {
	for {
		_, err := br.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

// AddLine folds one line; a blank line is nothing, one that does not parse is unreadable.
func (s *Summary) AddLine(line []byte) {
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	rec, err := ParseLine(line)
	if err != nil {
		s.Unreadable++
		return
	}
	s.Add(rec)
}

// ParseLine reads one log line. The dispatch field comes back normalised: a cause of the
// vocabulary, or empty when the invocation recorded none.
func ParseLine(line []byte) (Record, error) {
	if len(line) > MaxLineBytes {
		return Record{}, ErrLineTooLong
	}
	var r Record
	if err := json.Unmarshal(line, &r); err != nil {
		return Record{}, fmt.Errorf("statistics line: %w", err)
	}
	if r.Dispatch != "" {
		r.Dispatch = NormalizeCause(string(r.Dispatch))
	}
	return r, nil
}

// Add folds one record.
func (s *Summary) Add(r Record) {
	s.Invocations++
	s.countOutcome(r)
	if r.Reason != "" {
		s.addReason(string(r.Outcome) + ": " + reasonKey(r.Reason))
	}
	if r.Dispatch != "" {
		s.Dispatch[NormalizeCause(string(r.Dispatch))]++
	}
	s.addPositive(&s.PreprocessMS, r.CppMS)
	s.addPositive(&s.LookupMS, r.LookupMS)
	s.addPositive(&s.StoreMS, r.StoreMS)
	s.addPositive(&s.CacheMS, r.CacheMS)
}

func (s *Summary) countOutcome(r Record) {
	switch r.Outcome {
	case Hit:
		s.Hits++
		switch r.Via {
		case "direct":
			s.HitsDirect++
		case "listing":
			s.HitsListing++
		default:
			s.HitsPrepro++
		}
		s.HitMS.Add(r.TotalMS)
	case Miss:
		s.Misses++
		s.MissMS.Add(r.TotalMS)
	case Uncacheable:
		s.Uncacheable++
	case Passthrough:
		s.Passthrough++
	case Unavailable:
		s.Unavailable++
	case Fallback:
		s.Fallbacks++
	case Failed:
		s.CompileFailed++
	default:
		s.OtherOutcomes++
	}
}

// addPositive counts a phase's time; 0 means the invocation never entered that phase (the
// fields are omitted from the line then, and pace-cc measures in whole microseconds).
func (s *Summary) addPositive(l *Latency, ms float64) {
	if ms > 0 {
		l.Add(ms)
	}
}

func (s *Summary) addReason(key string) {
	if _, seen := s.Reasons[key]; !seen && len(s.Reasons) >= MaxReasons {
		key = OtherReasons
	}
	s.Reasons[key]++
}

// reasonKey is a reason's row: the text before any ": " (what follows is an error's detail,
// which names paths and would make every invocation a row of its own), at most
// maxReasonBytes long.
func reasonKey(reason string) string {
	reason, _, _ = strings.Cut(reason, ": ")
	if len(reason) <= maxReasonBytes {
		return reason
	}
	cut := maxReasonBytes
	for cut > 0 && !utf8.RuneStart(reason[cut]) {
		cut--
	}
	return reason[:cut]
}
