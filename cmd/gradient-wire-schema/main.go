// Command gradient-wire-schema keeps internal/gradient/wire/schema in step with the code: it
// writes v{N}.txt for every supported protocol version that has no file yet (or, with
// -version, for exactly that version), deletes files below the oldest supported version, and
// never rewrites an existing file.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/wire/schemagen"
)

func main() {
	dir := flag.String("dir", "internal/gradient/wire/schema", "schema directory")
	version := flag.Uint("version", 0, "write only this version's file (refused if it exists)")
	flag.Parse()
	if err := run(*dir, *version); err != nil {
		fmt.Fprintln(os.Stderr, "gradient-wire-schema:", err)
		os.Exit(1)
	}
}

func run(dir string, version uint) error {
	supported := wire.ProtoVersions()
	if version != 0 {
		if version > 0xffff {
			return fmt.Errorf("version %d is not a u16", version)
		}
		if err := schemagen.Write(dir, supported, uint16(version), wire.Describe); err != nil {
			return err
		}
		fmt.Println("wrote", schemagen.FileName(uint16(version)))
		return nil
	}
	res, err := schemagen.Sync(dir, supported, wire.Describe)
	for _, name := range res.Written {
		fmt.Println("wrote", name)
	}
	for _, name := range res.Deleted {
		fmt.Println("deleted", name)
	}
	for _, name := range res.Kept {
		fmt.Println("unchanged", name)
	}
	return err
}
