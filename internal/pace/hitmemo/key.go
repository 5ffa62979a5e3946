package hitmemo

import (
	"path/filepath"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
)

// CompilerEnv are the variables the compiler reads that change what a compile prints or finds:
// both cache keys cover them (pace-wire §3.5), and so does the invocation key.
var CompilerEnv = []string{"CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH",
	"OBJCPLUS_INCLUDE_PATH", "GCC_COLORS", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES",
	"SOURCE_DATE_EPOCH", "GCC_EXEC_PREFIX", "COMPILER_PATH"}

// rootEnv are pace-cc's own variables that change a key or how a hit is localized.
var rootEnv = []string{"PACE_SOURCE_DIR", "PACE_BINARY_DIR"}

// Invocation is one compile command as pace-cc was given it.
type Invocation struct {
	Compiler string   // the real compiler's path, as pace-cc resolved it
	Cwd      string   // the working directory
	Args     []string // the compiler's arguments, in order
	Env      []string // EnvLines of the process environment
}

// EnvLines are the set variables among the roots and CompilerEnv, as NAME=value in a fixed
// order. A set but empty variable still counts: the compiler may treat it apart from unset.
func EnvLines(lookup func(string) (string, bool)) []string {
	var out []string
	for _, list := range [][]string{rootEnv, CompilerEnv} {
		for _, name := range list {
			if v, ok := lookup(name); ok {
				out = append(out, name+"="+v)
			}
		}
	}
	return out
}

// Key is the invocation key a memo is filed under. Everything that feeds the manifest key is
// in it, in raw form: two commands that differ anywhere never share a memo.
func Key(inv Invocation) cachekey.Digest {
	b := cachekey.New(cachekey.TagHitMemo).Path(inv.Compiler).Path(inv.Cwd)
	b.FieldString("args")
	for _, a := range inv.Args {
		b.Item(a)
	}
	b.FieldString("env")
	for _, e := range inv.Env {
		b.Item(e)
	}
	return b.Sum()
}

// Path is where the memo for key lives in pace-cc's state directory.
func Path(stateDir string, key cachekey.Digest) string {
	hex := key.Hex()
	return filepath.Join(stateDir, "hits", hex[:2], hex)
}
