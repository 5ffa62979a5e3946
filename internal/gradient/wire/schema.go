package wire

import (
	"embed"
	"strconv"
)

// schemaFiles are the checked-in wire shapes, one file per supported version
// (gradient-protocol §2.3). cmd/gradient-wire-schema writes them; schema_test.go holds
// them equal to Describe.
//
//go:embed schema/v*.txt
var schemaFiles embed.FS

// SchemaFile returns the checked-in schema text of version v, if there is one.
func SchemaFile(v uint16) (string, bool) {
	b, err := schemaFiles.ReadFile("schema/v" + strconv.Itoa(int(v)) + ".txt")
	return string(b), err == nil
}
