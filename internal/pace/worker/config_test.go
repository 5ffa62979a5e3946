package worker

import (
	"errors"
	"flag"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/argvet"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

func TestNewRefusesAnUnusableConfig(t *testing.T) {
	signer := newFixture(t).node
	cases := map[string]Config{
		"no slots":           {Slots: 0, Budget: 1, Signer: signer},
		"no budget":          {Slots: 1, Signer: signer},
		"no identity key":    {Slots: 1, Budget: 1},
		"leases, no roster":  {Slots: 1, Budget: 1, Signer: signer, VerifyLeases: true},
		"bad extension":      {Slots: 1, Budget: 1, Signer: signer, AllowCompileArgs: []string{"-fplugin=evil.so"}},
		"unusable temp root": {Slots: 1, Budget: 1, Signer: signer, ScratchParent: "/nonexistent/pace"},
	}
	for name, cfg := range cases {
		cfg.Logger = quietLogger()
		if w, err := New(cfg); err == nil {
			w.Close()
			t.Errorf("%s: New accepted it", name)
		}
	}
}

// TestAllowCompileArgExtendsOnlyWhatTheTablesDoNotKnow: an operator entry
// admits exactly that argument; a reload swaps the set; a hard refusal
// can never be re-admitted (pace-node §5.5).
func TestAllowCompileArgExtendsOnlyWhatTheTablesDoNotKnow(t *testing.T) {
	const extra = "-fno-such-flag-yet"
	f := newFixture(t).start()
	if o := f.compile(f.request(tinyTU, extra, "-x", "cpp-output")); o.refusal.Code != wire.CodeWorkerRejectedArgument {
		t.Fatalf("unknown flag answered %v", o.refusal)
	}
	if err := f.w.SetAllowCompileArgs([]string{extra}); err != nil {
		t.Fatal(err)
	}
	if o := f.compile(f.request(tinyTU, "-O2", "-x", "cpp-output")); o.status != wire.StatusOk {
		t.Fatalf("after the reload: %v", o.refusal)
	}
	if err := f.w.SetAllowCompileArgs([]string{"-fplugin=x.so"}); !errors.Is(err, argvet.ErrInvalidExtension) {
		t.Fatalf("a hard refusal as extension: %v", err)
	}
	if o := f.compile(f.request(tinyTU, "-O2", extra+"=1", "-x", "cpp-output")); o.refusal.Code != wire.CodeWorkerRejectedArgument {
		t.Fatalf("an extension must match whole: %v", o.refusal)
	}
}

func TestFlags(t *testing.T) {
	parse := func(args ...string) *Flags {
		var f Flags
		fs := flag.NewFlagSet("pace-node", flag.ContinueOnError)
		f.Register(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return &f
	}
	host := Host{LogicalCores: 16, MemoryTotal: 64 * gib}
	if slots, budget := parse().Sizing(host); slots != 14 || budget != 14*BudgetPerSlot {
		t.Errorf("defaults: %d slots, %d bytes", slots, budget)
	}
	if slots, _ := parse("--node-class=dedicated").Sizing(host); slots != 16 {
		t.Errorf("dedicated: %d", slots)
	}
	if slots, _ := parse("--reserve-cores=0", "--node-class=workstation").Sizing(host); slots != 16 {
		t.Errorf("--reserve-cores=0: %d", slots)
	}
	if slots, budget := parse("--slots=40", "--reserve-cores=9", "--compile-inflight-max=1GiB").Sizing(host); slots != 40 || budget != gib {
		t.Errorf("literal: %d slots, %d bytes", slots, budget)
	}
	if parse("--slots=0").RunsWorker() || !parse().RunsWorker() {
		t.Error("--slots=0 is the only way to run no worker")
	}
	fl := parse("--toolchain=gcc-12", "--toolchain="+fakeFP+"=/usr/bin/gcc", "--allow-compile-arg=-fx", "--drain-timeout=0s")
	cfg, err := fl.Config(host, "/cache", Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Toolchains.Pins) != 2 || cfg.Toolchains.Pins[1].Fingerprint != fakeFP || cfg.AllowCompileArgs[0] != "-fx" || fl.Drain() != 0 {
		t.Fatalf("config %+v", cfg)
	}
	if _, err := parse("--no-toolchain-discovery").Config(host, "", Config{}); !errors.Is(err, ErrNoToolchainSource) {
		t.Fatalf("--no-toolchain-discovery alone: %v", err)
	}
	if parse().Drain() != DefaultDrainTimeout || parse().NodeClass.Class != verbs.ClassWorkstation {
		t.Error("defaults of --drain-timeout and --node-class")
	}
}
