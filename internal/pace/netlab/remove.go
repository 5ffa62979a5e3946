package netlab

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// drainTimeout bounds the wait for killed processes to leave a namespace.
const drainTimeout = 5 * time.Second

// sweep removes the namespaces of owned labs whose process has died, so a test killed before
// its Close leaves nothing behind past the next New on this machine. A lab whose owner is
// alive, here or in another process, and every named lab are left alone.
func sweep() error {
	names, err := namespaces()
	if err != nil {
		return err
	}
	var errs []error
	for _, ns := range names {
		if pid, ok := ownerPID(ns); ok && !alive(pid) {
			errs = append(errs, removeNamespace(ns))
		}
	}
	return errors.Join(errs...)
}

// alive reports whether a process is running. A zombie is not: a test process killed while
// its parent was busy stays one for a while, and its lab is as dead as it is.
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses and may hold anything.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return true
	}
	state := stat[i+2]
	return state != 'Z' && state != 'X'
}

// removeNamespace kills every process still inside ns and deletes it. The kill comes first
// because a namespace lives on, with its interfaces, as long as a process is in it, and a
// test's servers left running would otherwise keep its lab alive unseen. A namespace that is
// already gone (another sweep was quicker) is no error.
func removeNamespace(ns string) error {
	if err := killInside(ns); err != nil {
		return err
	}
	if err := ip("netns", "delete", ns); err != nil && nsExists(ns) {
		return fmt.Errorf("removing namespace %s: %w", ns, err)
	}
	return nil
}

// killInside sends SIGKILL to every process in ns and waits until none is left.
func killInside(ns string) error {
	deadline := time.Now().Add(drainTimeout)
	for {
		pids, err := pidsInside(ns)
		if err != nil || len(pids) == 0 {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("namespace %s: processes %v still running %v after SIGKILL", ns, pids, drainTimeout)
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL) // it may have exited meanwhile
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pidsInside lists the processes whose network namespace is ns; none when ns is gone.
func pidsInside(ns string) ([]int, error) {
	if !nsExists(ns) {
		return nil, nil
	}
	out, err := run("", "ip", "netns", "pids", ns)
	if err != nil {
		if !nsExists(ns) {
			return nil, nil
		}
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(out) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}
