// Package procstatus reads a process's memory figures from /proc/<pid>/status (VmRSS, VmHWM),
// for the tests and soak harnesses that hold a daemon to its memory budget.
package procstatus

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// KiB is one field of /proc/<pid>/status, in KiB ("VmRSS:  1234 kB" gives 1234).
func KiB(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, field)
}
