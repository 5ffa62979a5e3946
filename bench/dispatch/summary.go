package main

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
)

// tuBest is one TU over the rounds: the fastest of each way in seconds, its outcome in each
// round, and how many rounds dispatched it.
type tuBest struct {
	best       [4]float64
	outcome    map[int]string
	dispatched int
	repeated   bool // seen twice in one round: not one TU
}

var workerPort = regexp.MustCompile(`worker [^ ]*: `)

// collect folds the replayed rows by TU (directory + source).
func collect(rows []replayed) (map[string]*tuBest, []string) {
	tus, seen := map[string]*tuBest{}, map[string]bool{}
	var keys []string
	for _, r := range rows {
		key := r.dir + "/" + r.src
		tu, ok := tus[key]
		if !ok {
			tu = &tuBest{best: [4]float64{math.Inf(1), math.Inf(1), math.Inf(1), math.Inf(1)}, outcome: map[int]string{}}
			tus[key], keys = tu, append(keys, key)
		}
		roundKey := fmt.Sprint(r.round, "\x00", key)
		tu.repeated = tu.repeated || seen[roundKey]
		seen[roundKey] = true
		o := r.outcome
		if loc := workerPort.FindStringIndex(o); loc != nil { // one line per reason, whatever the port
			o = o[:loc[0]] + "the worker: " + o[loc[1]:]
		}
		if r.localMiss != "miss" {
			o += " (local pace-cc run: " + r.localMiss + ")"
		}
		tu.outcome[r.round] = o
		for i, us := range r.us {
			tu.best[i] = min(tu.best[i], us/1e6)
		}
		if o == "dispatched" {
			tu.dispatched++
		}
	}
	return tus, keys
}

// summarize prints, over the TUs dispatched (and missed by the local pace-cc run) in every
// round, the overhead as totals and as the spread of per-TU ratios.
func summarize(rows []replayed, rounds int) error {
	tus, keys := collect(rows)
	var all, sum [4]float64
	var n, nd, ndup int
	var ratios [2][]float64
	other := map[string]int{}
	for _, key := range keys {
		tu := tus[key]
		if tu.repeated {
			ndup++
			continue
		}
		n++
		for i := range all {
			all[i] += tu.best[i]
		}
		if tu.dispatched == rounds {
			nd++
			for i := range sum {
				sum[i] += tu.best[i]
			}
			ratios[0] = append(ratios[0], round4((tu.best[3]-tu.best[2])/tu.best[1]))
			ratios[1] = append(ratios[1], round4((tu.best[3]-tu.best[0])/tu.best[1]))
			continue
		}
		for r := 1; r <= rounds; r++ {
			if o := tu.outcome[r]; o != "dispatched" {
				other[o]++
			}
		}
	}
	repeated := ""
	if ndup > 0 {
		repeated = fmt.Sprintf(" (%d repeated compile keys left out)", ndup)
	}
	fmt.Printf("  all %d TUs: plain gcc %.2f s, preprocess only %.2f s, pace-cc here %.2f s, pace-cc dispatched %.2f s%s\n",
		n, all[0], all[1], all[2], all[3], repeated)
	fmt.Printf("  dispatched (and a miss here) in every round: %d of %d TUs\n", nd, n)
	for _, o := range sortedKeys(other) {
		fmt.Printf("    left out (TU-rounds): %d x %s\n", other[o], o)
	}
	if nd == 0 {
		fmt.Println("  no TU was dispatched")
		return errNoTU
	}
	printOverheads(sum, nd)
	spread(ratios[0], "dispatched over compiled here")
	spread(ratios[1], "dispatched over plain gcc")
	return nil
}

func printOverheads(sum [4]float64, nd int) {
	fmt.Printf("  over those %d TUs: plain gcc %.2f s, preprocess only %.2f s, pace-cc here %.2f s, pace-cc dispatched %.2f s\n",
		nd, sum[0], sum[1], sum[2], sum[3])
	c := sum[1] / float64(nd)
	overhead("dispatched over compiled here, both pace-cc misses", (sum[3]-sum[2])/float64(nd), c)
	overhead("dispatched pace-cc over plain gcc (adds the cache key probe and STORE)", (sum[3]-sum[0])/float64(nd), c)
}

func overhead(what string, o, c float64) {
	met := "NOT met"
	if o/c <= 2 {
		met = "met"
	}
	fmt.Printf("  per-TU overhead, %s: %.1f ms over a %.1f ms preprocess, ratio %.2f (goal <= 2): %s\n", what, o*1e3, c*1e3, o/c, met)
}

// spread prints the median and deciles of per-TU ratios.
func spread(r []float64, what string) {
	slices.Sort(r)
	at := func(i int) float64 { // 1-based, as the report has always counted
		if i < 1 || i > len(r) {
			return 0
		}
		return r[i-1]
	}
	nr := len(r)
	fmt.Printf("  per-TU ratio overhead/preprocess, %s: median %.2f, p10 %.2f, p90 %.2f\n",
		what, at((nr+1)/2), at(int(float64(nr)*0.1)+1), at(int(float64(nr)*0.9)))
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
