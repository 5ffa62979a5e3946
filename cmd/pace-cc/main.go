// Command pace-cc is pace's compiler wrapper: `pace-cc gcc -c a.c -o a.o`, or a symlink named
// after a compiler. A hit is served from the cache; a miss compiles and stores; nothing it does
// can fail a build that would otherwise succeed.
package main

import (
	"os"

	"github.com/buildfleet/buildfleet/internal/pace/cc"
)

func main() { os.Exit(cc.Main(cc.ProcessIO())) }
