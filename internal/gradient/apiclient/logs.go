package apiclient

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
)

// maxLogAnswer bounds one log answer: the server sends at most 8 MiB.
const maxLogAnswer = 9 << 20

// LogQuery picks a window of a build's log: Attempt "" is the latest attempt, Limit 0 the
// server's default.
type LogQuery struct {
	Attempt       string
	Offset, Limit int64
}

// LogChunk is one window of an attempt's log.
type LogChunk struct {
	Data       []byte
	Attempt    string
	Size       int64 // the attempt's log length when read
	NextOffset int64
}

// BuildLog reads one window of a build attempt's log.
func (c *Client) BuildLog(ctx context.Context, buildID string, q LogQuery) (LogChunk, error) {
	v := url.Values{}
	if q.Attempt != "" {
		v.Set("attempt", q.Attempt)
	}
	if q.Offset > 0 {
		v.Set("offset", strconv.FormatInt(q.Offset, 10))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.FormatInt(q.Limit, 10))
	}
	path := "/builds/" + seg(buildID) + "/log"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	resp, err := c.send(ctx, "GET", path, nil)
	if err != nil {
		return LogChunk{}, err
	}
	defer resp.Body.Close()
	out := LogChunk{Attempt: resp.Header.Get(api.HeaderAttempt)}
	if out.Data, err = io.ReadAll(io.LimitReader(resp.Body, maxLogAnswer)); err != nil {
		return LogChunk{}, fmt.Errorf("GET %s: %w", path, err)
	}
	out.Size, _ = strconv.ParseInt(resp.Header.Get(api.HeaderLogSize), 10, 64)
	out.NextOffset, err = strconv.ParseInt(resp.Header.Get(api.HeaderNextOffset), 10, 64)
	if err != nil {
		return LogChunk{}, fmt.Errorf("GET %s: answer lacks %s", path, api.HeaderNextOffset)
	}
	return out, nil
}

// CopyBuildLog writes an attempt's whole log (as long as it was when the first page was
// read) to w, page by page, and returns the bytes written.
func (c *Client) CopyBuildLog(ctx context.Context, buildID, attempt string, w io.Writer) (int64, error) {
	q := LogQuery{Attempt: attempt}
	var written int64
	for {
		chunk, err := c.BuildLog(ctx, buildID, q)
		if err != nil {
			return written, err
		}
		n, err := w.Write(chunk.Data)
		written += int64(n)
		if err != nil {
			return written, err
		}
		if len(chunk.Data) == 0 || chunk.NextOffset >= chunk.Size {
			return written, nil
		}
		// Pin the attempt so a retry starting meanwhile does not splice two logs.
		q = LogQuery{Attempt: chunk.Attempt, Offset: chunk.NextOffset}
	}
}
