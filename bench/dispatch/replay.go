package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// replayed is one compile of one round: the four wall times in microseconds (plain gcc,
// preprocess only, pace-cc here, pace-cc dispatched), the dispatch outcome, whether the local
// pace-cc run was a miss ("miss" or "not-a-miss"), directory and source.
type replayed struct {
	round     int
	us        [4]float64
	outcome   string
	localMiss string
	dir, src  string
}

// tuPart is part 2: the Redis build recorded once, replayed -tu-rounds times, summarized.
func (b *bench) tuPart(redis string) error {
	fmt.Printf("\nRedis 7.0.15 per-TU dispatch overhead (goal: overhead <= 2x local preprocess per TU)\n")
	records, err := b.recordBuild(redis)
	if err != nil {
		return err
	}
	fmt.Printf("  then %d round(s) replaying every compile one at a time: plain gcc / -E / pace-cc here / pace-cc dispatched, back to back\n", b.c.tuRounds)
	var all []replayed
	for round := 1; round <= b.c.tuRounds; round++ {
		rows, err := b.replayRound(round, records)
		if err != nil {
			return err
		}
		all = append(all, rows...)
	}
	return summarize(all, b.c.tuRounds)
}

// replayRound starts two fresh nodes (one the dispatching pace-cc's tier, scheduler and worker;
// one only the local pace-cc's tier), replays once, and prints what pace-cc and the node
// counted.
func (b *bench) replayRound(round int, records []compileRecord) ([]replayed, error) {
	local, err := b.startNode(fmt.Sprintf("tu-%d-local", round), "--slots=1", "--cache-memory=1GiB")
	if err != nil {
		return nil, err
	}
	n, err := b.startNode(fmt.Sprintf("tu-%d", round), "--slots=2", "--cache-memory=1GiB")
	if err != nil {
		return nil, err
	}
	before, start := load(), time.Now()
	rows, err := b.replay(round, records, n.addr, local.addr)
	if err != nil {
		return nil, err
	}
	wall := time.Since(start).Seconds()
	stats, err := output(append(os.Environ(), "HOME="+b.home(round)), "bin/pace-cc", "-s")
	if err != nil {
		return nil, err
	}
	fmt.Printf("  round %d: %.1f s [before: %s; after: %s]\n", round, wall, before, load())
	fmt.Printf("    pace-cc -s dispatch outcomes: %s\n", dispatchOutcomes(stats))
	granted, _ := n.metric("pace_dispatch_leases_granted_total")
	released, _ := n.metric("pace_dispatch_leases_released_total")
	jobs, _ := n.metric("pace_worker_jobs_completed_total")
	fmt.Printf("    node: leases granted %d, released %d, worker jobs completed %d\n", granted, released, jobs)
	n.p.stop()
	local.p.stop()
	return rows, nil
}

func (b *bench) home(round int) string { return filepath.Join(b.work, fmt.Sprintf("home-%d", round)) }

var spaces = regexp.MustCompile(`  +`)

// dispatchOutcomes joins the indented lines under "dispatch outcomes:" of pace-cc -s.
func dispatchOutcomes(stats string) string {
	var out []string
	on := false
	for _, line := range strings.Split(stats, "\n") {
		switch {
		case strings.HasPrefix(line, "dispatch outcomes:"):
			on = true
		case on && strings.HasPrefix(line, "  "):
			out = append(out, spaces.ReplaceAllString(strings.TrimLeft(line, " "), " "))
		default:
			on = false
		}
	}
	return strings.Join(out, "; ")
}

// replay runs every compile of the build, in build order and in its own directory, four ways
// back to back: plain gcc; preprocess only; pace-cc compiling here (no PACE_SCHEDULER, its own
// HOME and node tier: a miss like the next); pace-cc with dispatch (PACE_VERBOSE names the
// outcome).
func (b *bench) replay(round int, records []compileRecord, nodeAddr, localAddr string) ([]replayed, error) {
	home := b.home(round)
	env := append(os.Environ(), "HOME="+home, "PACE_ADDR="+nodeAddr, "PACE_SCHEDULER="+nodeAddr, "PACE_VERBOSE=1")
	localEnv := append(without(env, "PACE_SCHEDULER"), "HOME="+home+"-local", "PACE_ADDR="+localAddr)
	paceCC := filepath.Join(b.repo, "bin", "pace-cc")
	for _, h := range []string{home, home + "-local"} { // warm: not a per-TU cost
		if err := os.MkdirAll(h, 0o755); err != nil {
			return nil, err
		}
		if _, err := output(append(env, "HOME="+h), paceCC, "--print-toolchain-fingerprint", "gcc"); err != nil {
			return nil, err
		}
	}
	var rows []replayed
	for _, r := range records {
		src := r.Src
		if !filepath.IsAbs(src) {
			src = filepath.Join(r.Dir, src)
		}
		if _, err := os.Stat(src); err != nil {
			continue // the Makefile's probes delete their source straight away
		}
		rows = append(rows, replayOne(round, r, env, localEnv, paceCC))
	}
	return rows, nil
}

func replayOne(round int, r compileRecord, env, localEnv []string, paceCC string) replayed {
	row := replayed{round: round, dir: r.Dir, src: r.Src, localMiss: "miss"}
	var localErr, paceErr bytes.Buffer
	row.us[0] = usec(r.Dir, env, nil, r.Argv...)
	row.us[1] = usec(r.Dir, env, nil, append(preprocessArgs(r.Argv), "-E", "-o", "/dev/null")...)
	row.us[2] = usec(r.Dir, localEnv, &localErr, append([]string{paceCC}, r.Argv...)...)
	if !hasLinePrefix(localErr.String(), "pace-cc: MISS") {
		row.localMiss = "not-a-miss"
	}
	row.us[3] = usec(r.Dir, env, &paceErr, append([]string{paceCC}, r.Argv...)...)
	row.outcome = outcomeOf(paceErr.String())
	return row
}

// preprocessArgs is a compile's argv without -c, -o and the depfile flags.
func preprocessArgs(argv []string) []string {
	var out []string
	for i := 0; i < len(argv); i++ {
		switch argv[i] {
		case "-c", "-MMD", "-MD", "-MP":
		case "-o", "-MF", "-MT", "-MQ":
			i++
		default:
			out = append(out, argv[i])
		}
	}
	return out
}

var notDispatched = regexp.MustCompile(`^pace-cc: not dispatched \((.*)\): compiling here$`)

// outcomeOf reads what the dispatching pace-cc said: dispatched, compiled here and why, or
// its first other line.
func outcomeOf(stderr string) string {
	lines := strings.Split(stderr, "\n")
	if hasLinePrefix(stderr, "pace-cc: DISPATCHED") {
		return "dispatched"
	}
	for _, l := range lines {
		if m := notDispatched.FindStringSubmatch(l); m != nil {
			return "local: " + m[1]
		}
	}
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, "pace-cc: "); ok {
			return "other: " + rest
		}
	}
	return "other: "
}

func hasLinePrefix(text, prefix string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// usec runs argv in dir (its status ignored: a compile that fails fails alike every way) and
// returns its wall time in microseconds.
func usec(dir string, env []string, stderr *bytes.Buffer, argv ...string) float64 {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	if stderr != nil {
		cmd.Stderr = stderr
	}
	start := time.Now()
	_ = cmd.Run()
	return float64(time.Since(start).Microseconds())
}

// without is env with every NAME= entry removed.
func without(env []string, name string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, name+"=") {
			out = append(out, e)
		}
	}
	return out
}
