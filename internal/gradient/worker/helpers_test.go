package worker_test

import (
	"fmt"
	"os"
)

func fmtType(v any) string { return fmt.Sprintf("%T", v) }

func writeFile(path, text string) error { return os.WriteFile(path, []byte(text), 0o600) }
