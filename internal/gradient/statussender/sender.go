package statussender

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/aeadbox"
	"github.com/buildfleet/buildfleet/internal/gradient/forgestatus"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// Config wires a Sender.
type Config struct {
	Store store.Statuses
	// Secrets opens the sealed tokens and webhook secrets; nil gives every status up.
	Secrets *aeadbox.Box
	// PublicURL is the server's address as browsers reach it (http://host:port); statuses
	// link to <PublicURL>/evaluations/<id>. "" sends no target URL.
	PublicURL string
	// Client sends the requests (nil: one that follows no redirects).
	Client  *http.Client
	Timeout time.Duration     // per request (10 s)
	Poll    time.Duration     // how often the outbox is read without a Kick (1 s)
	Retry   forgestatus.Retry // zero: forgestatus.DefaultRetry
	Logger  *slog.Logger
	Now     func() time.Time
	Rand    func() float64 // jitter in [0, 1) (nil: math/rand)
}

// Sender drains the outbox.
type Sender struct {
	cfg      Config
	kick     chan struct{}
	counters *Counters
}

// New fills Config's defaults.
func New(cfg Config) *Sender {
	if cfg.Client == nil {
		cfg.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.Retry.MaxAttempts <= 0 {
		cfg.Retry = forgestatus.DefaultRetry
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	return &Sender{cfg: cfg, kick: make(chan struct{}, 1), counters: newCounters()}
}

// Counters exposes the delivery counters.
func (s *Sender) Counters() *Counters { return s.counters }

// Kick asks for the outbox to be read now (a state change queued statuses).
func (s *Sender) Kick() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Run drains the outbox every Poll and on Kick until ctx ends.
func (s *Sender) Run(ctx context.Context) {
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	for {
		s.Drain(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.kick:
		}
	}
}

// Drain sends every due status once, oldest first, and returns how many it attempted.
func (s *Sender) Drain(ctx context.Context) int {
	due, err := s.cfg.Store.DueStatuses(ctx, 100)
	if err != nil {
		if ctx.Err() == nil {
			s.cfg.Logger.Warn("reading the status outbox", "err", err)
		}
		return 0
	}
	for _, o := range due {
		if ctx.Err() != nil {
			return 0
		}
		s.deliver(ctx, o)
	}
	return len(due)
}

// outcome is one attempt's result before it is recorded.
type outcome struct {
	label string // counter label: the forge or "webhook"
	http  int
	err   error
	final bool // refused for good: no retry
}

func (s *Sender) deliver(ctx context.Context, o store.OutgoingStatus) {
	req, label, err := s.request(ctx, o)
	out := outcome{label: label, err: err, final: err != nil}
	if err == nil {
		out.http, out.err = s.send(ctx, req)
		out.final = !forgestatus.Retryable(out.http)
	}
	s.record(ctx, o, out)
}

// record stores the attempt and counts it.
func (s *Sender) record(ctx context.Context, o store.OutgoingStatus, out outcome) {
	a := store.StatusAttempt{Attempts: o.Attempts + 1, HTTP: out.http}
	switch {
	case out.err == nil && forgestatus.Delivered(out.http):
		a.Outcome = store.StatusDelivered
		s.counters.add(s.counters.Delivered, out.label)
		s.cfg.Logger.Debug("status delivered", "evaluation", o.EvaluationID, "sink", out.label, "context", o.Context, "state", o.State)
	case out.final || a.Attempts >= s.cfg.Retry.MaxAttempts:
		a.Outcome, a.Error = store.StatusFailed, errText(out)
		s.counters.add(s.counters.Failed, out.label)
		s.cfg.Logger.Warn("status given up", "evaluation", o.EvaluationID, "sink", out.label, "context", o.Context,
			"state", o.State, "attempts", a.Attempts, "err", a.Error)
	default:
		a.Outcome, a.Error = store.StatusQueued, errText(out)
		a.NextAt = s.cfg.Now().Add(s.cfg.Retry.Delay(a.Attempts, s.cfg.Rand()))
		s.counters.add(s.counters.Retried, out.label)
		s.cfg.Logger.Info("status delivery failed; retrying", "evaluation", o.EvaluationID, "sink", out.label,
			"attempts", a.Attempts, "next", a.NextAt, "err", a.Error)
	}
	if err := s.cfg.Store.RecordStatusAttempt(ctx, o.ID, a); err != nil && ctx.Err() == nil {
		s.cfg.Logger.Warn("recording a status attempt", "id", o.ID, "err", err)
	}
}

func errText(out outcome) string {
	if out.err != nil {
		return out.err.Error()
	}
	return fmt.Sprintf("HTTP %d", out.http)
}

// send executes req with the per-request timeout; the answer's body is read (at most
// 64 KiB) and dropped, so the connection can be reused.
func (s *Sender) send(ctx context.Context, r forgestatus.Request) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return 0, fmt.Errorf("request: %w", err)
	}
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	req.Header.Set("User-Agent", "gradient-server")
	resp, err := s.cfg.Client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("sending: %w", errors.Unwrap(err)) // the url.Error's cause, without repeating the URL
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, nil
}
