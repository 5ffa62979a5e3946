package worker

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/flagval"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

// Flags are the worker's serving flags (pace-node §3.1). The node registers
// them, then builds the Config with Config.
type Flags struct {
	Slots            OptionalInt // --slots: unset derives (pace-node §5.1); 0 runs no worker
	NodeClass        NodeClassFlag
	ReserveCores     OptionalInt // --reserve-cores: unset uses the class reserve
	InflightMax      flagval.Size
	Toolchains       StringList // --toolchain, repeatable
	NoDiscovery      bool
	AllowCompileArgs StringList // --allow-compile-arg, repeatable
	DrainTimeout     flagval.Duration
}

// Register binds the flags on fs with their defaults.
func (f *Flags) Register(fs *flag.FlagSet) {
	f.NodeClass = NodeClassFlag{Class: verbs.ClassWorkstation}
	f.DrainTimeout = flagval.Duration{D: DefaultDrainTimeout}
	fs.Var(&f.Slots, "slots", "concurrent compiles, advertised and enforced (default derived from cores and memory; 0 = no worker)")
	fs.Var(&f.NodeClass, "node-class", "workstation (keeps 2 cores back) or dedicated (keeps none)")
	fs.Var(&f.ReserveCores, "reserve-cores", "cores kept back from derived slots (default from --node-class; ignored with --slots)")
	fs.Var(&f.InflightMax, "compile-inflight-max", "worker's in-flight byte budget (default min(25% of RAM, slots × 256MiB))")
	fs.Var(&f.Toolchains, "toolchain", "serve this compiler, or <fingerprint>=<compiler>; repeatable; naming any serves exactly that set")
	fs.BoolVar(&f.NoDiscovery, "no-toolchain-discovery", false, "do not survey the machine for compilers")
	fs.Var(&f.AllowCompileArgs, "allow-compile-arg", "accept this exact compile argument beyond the built-in allowlist; repeatable")
	fs.Var(&f.DrainTimeout, "drain-timeout", "how long stop waits for running compiles (0s waits for ever)")
}

// ErrNoToolchainSource: --no-toolchain-discovery without --toolchain
// (startup rule 7).
var ErrNoToolchainSource = errors.New("--no-toolchain-discovery needs at least one --toolchain")

// RunsWorker reports whether the flags ask for a worker at all.
func (f *Flags) RunsWorker() bool {
	n, set := f.Slots.Get()
	return !set || n != 0
}

// Sizing is the slot count and byte budget for host: --slots literally
// when given, else derived; --compile-inflight-max when given, else
// DefaultBudget.
func (f *Flags) Sizing(h Host) (slots int, budget uint64) {
	slots, set := f.Slots.Get()
	if !set {
		reserve, given := f.ReserveCores.Get()
		if !given {
			reserve = ClassReserve(f.NodeClass.Class)
		}
		slots = DeriveSlots(h, reserve)
	}
	budget = f.InflightMax.Bytes
	if budget == 0 {
		budget = DefaultBudget(h, slots)
	}
	return slots, budget
}

// Config fills base's sizing, toolchains and allowlist extensions from the
// flags. cacheDir is where toolchain probes are cached.
func (f *Flags) Config(h Host, cacheDir string, base Config) (Config, error) {
	if f.NoDiscovery && len(f.Toolchains) == 0 {
		return base, ErrNoToolchainSource
	}
	pins := make([]Pin, 0, len(f.Toolchains))
	for _, s := range f.Toolchains {
		p, err := ParsePin(s)
		if err != nil {
			return base, err
		}
		pins = append(pins, p)
	}
	base.Slots, base.Budget = f.Sizing(h)
	base.Toolchains = SurveyConfig{Pins: pins, NoDiscovery: f.NoDiscovery, Prober: ToolchainProber{CacheDir: cacheDir}}
	base.AllowCompileArgs = append([]string(nil), f.AllowCompileArgs...)
	return base, nil
}

// Drain is --drain-timeout.
func (f *Flags) Drain() time.Duration { return f.DrainTimeout.D }

// OptionalInt is an integer flag that tells "not given" from 0.
type OptionalInt struct {
	n   int
	set bool
}

// Get returns the value and whether it was given.
func (o *OptionalInt) Get() (int, bool) { return o.n, o.set }

func (o *OptionalInt) String() string {
	if !o.set {
		return ""
	}
	return strconv.Itoa(o.n)
}

// Set parses a non-negative integer.
func (o *OptionalInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("want a whole number ≥ 0, got %q", s)
	}
	o.n, o.set = n, true
	return nil
}

// StringList is a repeatable string flag.
type StringList []string

func (l *StringList) String() string { return fmt.Sprint([]string(*l)) }

// Set appends one value.
func (l *StringList) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// NodeClassFlag is --node-class.
type NodeClassFlag struct{ Class verbs.NodeClass }

func (c *NodeClassFlag) String() string {
	if c.Class == verbs.ClassDedicated {
		return "dedicated"
	}
	return "workstation"
}

// Set parses workstation or dedicated.
func (c *NodeClassFlag) Set(s string) error {
	switch s {
	case "workstation":
		c.Class = verbs.ClassWorkstation
	case "dedicated":
		c.Class = verbs.ClassDedicated
	default:
		return fmt.Errorf("want workstation or dedicated, got %q", s)
	}
	return nil
}
