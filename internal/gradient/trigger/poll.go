package trigger

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// RunPoller polls every project with polling on, a round every interval (±10 % at random,
// so servers started together do not poll in step), until ctx ends. interval <= 0 polls
// nothing.
func (s *Service) RunPoller(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		return
	}
	for {
		wait := time.Duration(float64(interval) * (0.9 + 0.2*rand.Float64()))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		s.PollOnce(ctx)
	}
}

// PollOnce runs one round: one ls-remote per polling project, one after the other, and an
// evaluation for each followed head the project has not seen.
func (s *Service) PollOnce(ctx context.Context) {
	targets, err := s.cfg.Store.PollTargets(ctx)
	if err != nil {
		s.log.Warn("trigger: listing the projects to poll", "err", err)
		return
	}
	for _, t := range targets {
		if ctx.Err() != nil {
			return
		}
		err := s.pollProject(ctx, t)
		outcome, msg := "ok", ""
		if err != nil {
			outcome, msg = "failed", err.Error()
			s.log.Warn("trigger: poll failed", "project", t.Project.Name, "err", err)
		}
		s.counters.Polls[outcome].Add(1)
		if err := s.cfg.Store.RecordPoll(ctx, t.Project.ID, s.cfg.Now(), msg); err != nil {
			s.log.Warn("trigger: recording a poll", "project", t.Project.Name, "err", err)
		}
	}
}

func (s *Service) pollProject(ctx context.Context, t store.PollTarget) error {
	l, err := s.listRemote(ctx, t.Project)
	if err != nil {
		return err
	}
	for _, h := range policy(t.Settings).Heads(l, t.Project.Branch) {
		if _, err := s.evaluate(ctx, t.Project, h, sourcePoll); err != nil {
			return err
		}
	}
	return nil
}
