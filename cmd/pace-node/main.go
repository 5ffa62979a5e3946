// Command pace-node runs one machine's part of a pace fleet on one port: this machine's private
// cache tier, the compile worker, the scheduler while it leads, node proof and machine tickets;
// consensus beside it. One-shot verbs (--print-surfaces, --print-identity) print and exit;
// operator verbs (--cluster-status, --cluster-admit, --cluster-admit-learner, --cluster-forget,
// --cluster-set) go to --scheduler, this machine's node by default, which follows not-leader.
//
// Exit status: 0 after a clean stop; 2 for a configuration it refuses (naming the rule); 75
// when a stop abandoned running compiles at --drain-timeout; 1 for any other failure.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/buildfleet/buildfleet/internal/pace/clusterctl"
	"github.com/buildfleet/buildfleet/internal/pace/identity"
	"github.com/buildfleet/buildfleet/internal/pace/node"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	if len(args) > 0 && (args[0] == "--help" || args[0] == "-h") {
		node.Usage(os.Stdout)
		return 0
	}
	if len(args) > 0 && args[0] == "--version" {
		fmt.Println("pace-node", node.Version)
		return 0
	}
	cfg, err := node.Load(args, node.MemoryTotal())
	if err != nil {
		fmt.Fprintln(os.Stderr, "pace-node:", err)
		return 2
	}
	verb, isVerb, err := cfg.OperatorVerb()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pace-node:", err)
		return 2
	}
	switch {
	case isVerb:
		return operatorVerb(cfg, verb)
	case cfg.ClusterRecover:
		return recoverCluster(cfg)
	case len(cfg.RecoverForget) > 0:
		fmt.Fprintln(os.Stderr, "pace-node: --cluster-recover-forget goes with --cluster-recover")
		return 2
	case cfg.PrintSurfaces:
		return node.NewPlan(cfg, node.MachineEnv()).PrintSurfaces(os.Stdout)
	case cfg.PrintIdentity:
		return printIdentity(cfg)
	}
	return serve(cfg, args)
}

// operatorVerb sends one cluster verb to --scheduler (this machine's node by default) and
// prints the answer; a refusal exits 1 with the leader's sentence.
func operatorVerb(cfg node.Config, verb clusterctl.Verb) int {
	local := node.LocalNodeAddr(cfg)
	opts := clusterctl.Options{Schedulers: cfg.Schedulers, LocalNode: local}
	if len(opts.Schedulers) == 0 {
		opts.Schedulers = []string{local}
	}
	a, err := clusterctl.Send(context.Background(), opts, verb)
	if err == nil {
		err = clusterctl.Print(os.Stdout, verb, a)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pace-node:", err)
		return 1
	}
	return 0
}

// recoverCluster is --cluster-recover, run with the node stopped.
func recoverCluster(cfg node.Config) int {
	rep, err := node.RecoverCluster(context.Background(), cfg, node.MachineEnv())
	if err != nil {
		fmt.Fprintln(os.Stderr, "pace-node:", err)
		return 1
	}
	fmt.Printf("cluster %s re-founded with this node as its only voter (snapshot at index %d, term %d)\n", rep.ClusterID, rep.Index, rep.Term)
	fmt.Printf("forgotten (keys revoked): %s\nkept as learners: %s\n", orNone(rep.Forgotten), orNone(rep.Demoted))
	fmt.Println("start the node again; promote the learners with --cluster-admit once they are back and caught up")
	return 0
}

func orNone(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

func printIdentity(cfg node.Config) int {
	p := node.NewPlan(cfg, node.MachineEnv())
	id, err := identity.Load(p.StateDir, identity.Options{NodeID: cfg.NodeID})
	if err != nil {
		fmt.Fprintln(os.Stderr, "pace-node:", err)
		return 1
	}
	if err := identity.PrintIdentity(os.Stdout, id, p.RaftEndpoint); err != nil {
		fmt.Fprintln(os.Stderr, "pace-node:", err)
		return 1
	}
	return 0
}

func serve(cfg node.Config, args []string) int {
	var level slog.LevelVar
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		fmt.Fprintln(os.Stderr, "pace-node: --log-level:", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: &level}))
	ctx := context.Background()
	n, err := node.Start(ctx, cfg, node.MachineEnv(), log, &level)
	if errors.Is(err, node.ErrRefused) {
		fmt.Fprintln(os.Stderr, "pace-node:", err)
		return 2
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pace-node:", err)
		return 1
	}
	return waitForSignals(ctx, n, log, args)
}

func waitForSignals(ctx context.Context, n *node.Node, log *slog.Logger, args []string) int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT)
	for sig := range sigs {
		if sig == syscall.SIGHUP {
			if err := n.Reload(ctx, args); err != nil {
				log.Error("reload: nothing changed", "err", err)
			} else {
				log.Info("reloaded")
			}
			continue
		}
		log.Info("stopping: draining running compiles", "signal", sig.String())
		abandoned, err := n.Stop(ctx)
		switch {
		case len(abandoned) > 0:
			log.Error("stopped with compiles abandoned at --drain-timeout", "abandoned", abandoned)
			return 75
		case err != nil:
			log.Error("stop", "err", err)
			return 1
		}
		return 0
	}
	return 0
}
