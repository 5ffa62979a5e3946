package admincli

import (
	"fmt"
	"io"
	"strconv"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
	"github.com/buildfleet/buildfleet/internal/gradient/loghub"
)

// followBuildLog is `build log --follow` (gradient-server §16): the log on stdout as it is
// written, each attempt's start and end on stderr, and an error (exit 1) unless the build
// succeeded. --attempt and --offset say where to start.
func followBuildLog(in *invocation, attempt string, offset, limit int64) error {
	if limit != 0 {
		return usagef("--limit does not go with --follow")
	}
	from := ""
	switch {
	case attempt != "":
		from = loghub.EventID(attempt, offset)
	case offset > 0:
		from = strconv.FormatInt(offset, 10)
	}
	end, err := in.client.FollowBuildLog(in.ctx, in.args[0], from, apiclient.Follow{
		Attempt: func(a api.Attempt) error {
			fmt.Fprintf(in.diag, "--- attempt %s on worker %s\n", a.ID, a.WorkerID)
			return nil
		},
		Data: func(text string) error {
			_, err := io.WriteString(in.out, text)
			return err
		},
		AttemptEnd: func(a api.Attempt) error {
			fmt.Fprintf(in.diag, "--- attempt %s: %s%s\n", a.ID, a.Outcome, orEmpty(": ", a.FailureReason))
			return nil
		},
	})
	if err != nil {
		return err
	}
	if !end.Success {
		return fmt.Errorf("build %s ended %s", end.BuildID, end.Status)
	}
	fmt.Fprintf(in.diag, "--- build %s: %s\n", end.BuildID, end.Status)
	return nil
}

func orEmpty(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}
