// Command pace-cc-full is the whole of pace-cc: keys, direct and preprocessed lookups, the
// local or dispatched compile on a miss, statistics and launcher flags. The pace-cc front
// hands it every invocation it cannot serve from its hit memo; it can also be run directly
// in pace-cc's place.
package main

import (
	"os"

	"github.com/buildfleet/buildfleet/internal/pace/cc"
)

func main() { os.Exit(cc.Main(cc.ProcessIO())) }
