package node

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/worker"
)

// Reload applies a SIGHUP (pace-node §3.3): it needs a --config file, rebuilds the
// configuration from the file and then the command line, judges it by the startup rules,
// refuses any change to a setting that needs a restart, and only then applies the reloadable
// ones. Nothing is applied when anything is refused; the error names every offending setting.
func (n *Node) Reload(ctx context.Context, args []string) error {
	if n.plan.Cfg.ConfigFile == "" {
		return fmt.Errorf("reload needs a --config file; this node was started with flags only, so nothing changed")
	}
	cfg, err := Load(args, MemoryTotal())
	if err != nil {
		return err
	}
	next := NewPlan(cfg, n.env)
	if len(next.Violations) > 0 {
		return fmt.Errorf("reload refused by the startup rules: %s", strings.Join(next.Violations, "; "))
	}
	if changed := n.restartOnly(next); len(changed) > 0 {
		return fmt.Errorf("reload refused: %s need a restart", strings.Join(changed, ", "))
	}
	return n.apply(ctx, next)
}

// restartOnly names the settings that differ and cannot change while running.
func (n *Node) restartOnly(next Plan) []string {
	old, cur := n.plan.Cfg, next.Cfg
	var changed []string
	check := func(name string, differ bool) {
		if differ && !reloadable[name] {
			changed = append(changed, "--"+name)
		}
	}
	check("listen-node", old.ListenNode != cur.ListenNode)
	check("listen-raft", old.ListenRaft != cur.ListenRaft)
	check("admin-listen", old.AdminListen != cur.AdminListen)
	check("dashboard", old.Dashboard != cur.Dashboard)
	check("dashboard-token-file", old.DashboardTokenFile != cur.DashboardTokenFile)
	check("cluster-dir", old.ClusterDir != cur.ClusterDir)
	check("cache-dir", old.CacheDir != cur.CacheDir)
	check("cache-memory", old.CacheMemory != cur.CacheMemory)
	check("cache-disk", old.CacheDisk != cur.CacheDisk)
	check("upstream", old.Upstream != cur.Upstream)
	check("raft-self", old.RaftSelf != cur.RaftSelf)
	check("max-connections", old.MaxConns != cur.MaxConns)
	check("max-connections-per-address", old.MaxConnsPerAddr != cur.MaxConnsPerAddr)
	check("max-inflight", old.MaxInflight != cur.MaxInflight)
	return changed
}

func (n *Node) apply(ctx context.Context, next Plan) error {
	cfg := next.Cfg
	var level slog.LevelVar
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	if n.work != nil {
		if err := n.work.SetAllowCompileArgs(cfg.Worker.AllowCompileArgs); err != nil {
			return err
		}
	}
	n.LogLevel.Set(level.Level())
	if n.tier != nil && cfg.RequirePass != n.plan.Cfg.RequirePass {
		n.tier.SetUpstreamPassword(cfg.RequirePass)
		n.log.Info("reload: the upstream cache password changed; new connections present it")
	}
	if wasOpen := n.flagFleetOpen.Swap(cfg.FleetOpen); wasOpen && !cfg.FleetOpen {
		n.log.Warn("--fleet-open closed by reload", "admits", admissionPolicy(n))
	}
	if adv := n.boundEndpoint(next.Advertise); adv != n.endpoint() {
		n.moveEndpoint(n.endpoint(), adv, "reload")
	}
	n.followsRoute.Store(next.FollowsRoute)
	toolchainsChanged := !slices.Equal(n.plan.Cfg.Worker.Toolchains, cfg.Worker.Toolchains) || n.plan.Cfg.Worker.NoDiscovery != cfg.Worker.NoDiscovery
	n.plan = next
	if n.work != nil && toolchainsChanged {
		return n.resurvey(ctx, cfg.Worker)
	}
	return nil
}

func (n *Node) resurvey(ctx context.Context, f worker.Flags) error {
	wcfg, err := f.Config(n.host, n.toolchainDir(), worker.Config{})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	_, err = n.work.Resurvey(ctx, wcfg.Toolchains)
	return err
}
