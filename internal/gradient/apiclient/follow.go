package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/loghub"
)

// maxFollowEvent bounds one event of a followed log; the server sends at most a 1 MiB
// window in one event.
const maxFollowEvent = 4 << 20

// followRetries is how many times in a row FollowBuildLog reconnects after a stream broke
// without progress; followBackoff is the wait before the first, doubling each time (1 s to
// 16 s: long enough for a server restart).
const (
	followRetries = 5
	followBackoff = time.Second
)

// Follow receives a followed log's events; nil fields are not called. An error returned
// ends the follow with it.
type Follow struct {
	// Attempt is called when an attempt's log starts (it is not repeated on a resume).
	Attempt func(api.Attempt) error
	// Data is called with each piece of log text, its line breaks as "\n".
	Data func(text string) error
	// AttemptEnd is called once an attempt's log is complete.
	AttemptEnd func(api.Attempt) error
}

// FollowBuildLog follows a build's log as it is written (gradient-server §16) until the
// build ends, and returns how it ended. lastEventID "" starts with the latest attempt; an id
// the stream gave resumes after it. A broken stream is resumed from the last event received,
// without repeating any text.
func (c *Client) FollowBuildLog(ctx context.Context, buildID, lastEventID string, f Follow) (api.LogEnd, error) {
	failures := 0
	for {
		end, last, err := c.followOnce(ctx, buildID, lastEventID, f)
		if err == nil || !errors.Is(err, errStreamBroke) || ctx.Err() != nil {
			return end, err
		}
		if last != lastEventID {
			failures = 0
		}
		if failures++; failures > followRetries {
			return end, err
		}
		lastEventID = last
		select {
		case <-ctx.Done():
			return end, ctx.Err()
		case <-time.After(followBackoff << (failures - 1)):
		}
	}
}

// errStreamBroke marks a stream that ended without its end event: worth resuming.
var errStreamBroke = errors.New("the log stream ended early")

// followOnce reads one stream; it returns the last event id seen, to resume from.
func (c *Client) followOnce(ctx context.Context, buildID, lastEventID string, f Follow) (api.LogEnd, string, error) {
	path := "/builds/" + seg(buildID) + "/log?follow=1"
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+api.Prefix+path, nil)
	if err != nil {
		return api.LogEnd{}, lastEventID, fmt.Errorf("GET %s: %w", path, err)
	}
	req.Header.Set("Authorization", c.auth)
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return api.LogEnd{}, lastEventID, fmt.Errorf("GET %s: %w: %w", path, errStreamBroke, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return api.LogEnd{}, lastEventID, errorOf(resp)
	}
	r := loghub.NewReader(resp.Body, maxFollowEvent)
	for {
		ev, err := r.Next()
		switch {
		case errors.Is(err, loghub.ErrTooLong):
			return api.LogEnd{}, r.LastID(), fmt.Errorf("GET %s: %w", path, err)
		case err != nil && ctx.Err() != nil:
			return api.LogEnd{}, r.LastID(), ctx.Err()
		case err != nil: // the end of the body or a broken connection before the end event
			return api.LogEnd{}, pick(r.LastID(), lastEventID), fmt.Errorf("GET %s: %w: %w", path, errStreamBroke, err)
		}
		done, end, err := dispatch(ev, f)
		if err != nil || done {
			return end, r.LastID(), err
		}
	}
}

func pick(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// dispatch hands one event to f; done with the end event.
func dispatch(ev loghub.Event, f Follow) (bool, api.LogEnd, error) {
	switch ev.Name {
	case "", "message":
		if f.Data != nil {
			return false, api.LogEnd{}, f.Data(ev.Data)
		}
	case api.EventAttempt, api.EventAttemptEnd:
		call := f.Attempt
		if ev.Name == api.EventAttemptEnd {
			call = f.AttemptEnd
		}
		if call == nil {
			return false, api.LogEnd{}, nil
		}
		var at api.Attempt
		if err := json.Unmarshal([]byte(ev.Data), &at); err != nil {
			return false, api.LogEnd{}, fmt.Errorf("decoding a %s event: %w", ev.Name, err)
		}
		return false, api.LogEnd{}, call(at)
	case api.EventEnd:
		var end api.LogEnd
		if err := json.Unmarshal([]byte(ev.Data), &end); err != nil {
			return true, end, fmt.Errorf("decoding the end event: %w", err)
		}
		return true, end, nil
	}
	return false, api.LogEnd{}, nil
}
