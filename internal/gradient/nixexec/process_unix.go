//go:build unix

package nixexec

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func newProcessGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// watchCancel ends the process group pgid when ctx ends: SIGINT first, so that nix stops its
// builder the way it does on Ctrl-C (the builder lives in a session of its own under a build
// user and would survive a signal to nix's group), then, after grace, SIGKILL to the group
// and to the groups of every process nix had spawned. stop is called once the process was
// reaped; it waits for the watcher to finish.
func watchCancel(ctx interface{ Done() <-chan struct{} }, pgid int, grace time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		descendants := descendantsOf(pgid)
		_ = syscall.Kill(-pgid, syscall.SIGINT)
		timer := time.NewTimer(grace)
		defer timer.Stop()
		select {
		case <-done:
		case <-timer.C:
			descendants = append(descendants, descendantsOf(pgid)...)
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		killStragglers(descendants)
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		wg.Wait()
	}
}

// killStragglers SIGKILLs the process groups of processes that nix had spawned and that
// are still alive after nix ended (a builder nix had no chance to stop). A pid is only
// signalled while its parent chain still matches what was recorded, so a recycled pid is
// left alone.
func killStragglers(procs []proc) {
	for _, p := range procs {
		if start, ok := startTime(p.pid); ok && start == p.start {
			_ = syscall.Kill(-p.pid, syscall.SIGKILL)
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}
}

// proc identifies a process by pid and start time, which together do not repeat.
type proc struct {
	pid   int
	start string
}

// descendantsOf lists every live process below root (root excluded) by reading /proc. On a
// system without /proc it returns nothing.
func descendantsOf(root int) []proc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]proc{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, start, ok := statOf(pid)
		if ok {
			children[ppid] = append(children[ppid], proc{pid: pid, start: start})
		}
	}
	var out []proc
	queue := []int{root}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		for _, c := range children[next] {
			out = append(out, c)
			queue = append(queue, c.pid)
		}
	}
	return out
}

func startTime(pid int) (string, bool) {
	_, start, ok := statOf(pid)
	return start, ok
}

// statOf reads a process's parent pid and start time from /proc/<pid>/stat.
func statOf(pid int) (ppid int, start string, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, "", false
	}
	// The command name is in parentheses and may contain spaces: fields start after ')'.
	s := string(b)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return 0, "", false
	}
	fields := strings.Fields(s[end+1:])
	// fields[0] is the state, [1] ppid, ..., [19] starttime (field 22 of stat).
	if len(fields) < 20 || fields[0] == "Z" {
		return 0, "", false
	}
	ppid, err = strconv.Atoi(fields[1])
	if err != nil {
		return 0, "", false
	}
	return ppid, fields[19], true
}
