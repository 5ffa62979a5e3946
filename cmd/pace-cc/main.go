// Command pace-cc is pace's compiler wrapper: `pace-cc gcc -c a.c -o a.o`, or a symlink named
// after a compiler. This is its front: it serves a direct-mode hit it remembers and hands
// everything else to pace-cc-full, installed beside it. Nothing it does can fail a build that
// would otherwise succeed.
package main

import (
	"os"

	"github.com/buildfleet/buildfleet/internal/pace/ccfront"
)

func main() { os.Exit(ccfront.Main(ccfront.ProcessIO())) }
