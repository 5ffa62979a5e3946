package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// compileRecord is one compile of the recorded build: its directory, source and argv.
type compileRecord struct {
	Dir, Src string
	Argv     []string
}

// ccLog is `dispatch cc-log LOG COMPILER ARGS...`, the CC of the recorded build: it runs the
// compiler; a compile (-c of a .c file) also appends to LOG its directory, source and argv,
// one short write per line, so parallel makes are safe.
func ccLog(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: dispatch cc-log LOG COMPILER ARGS...")
		return 2
	}
	log, argv := args[0], args[1:]
	src, compile := "", false
	for _, a := range argv {
		switch {
		case a == "-c":
			compile = true
		case strings.HasSuffix(a, ".c"):
			src = a
		}
	}
	if !compile || src == "" {
		path, err := exec.LookPath(argv[0])
		if err == nil {
			err = syscall.Exec(path, argv, os.Environ())
		}
		fmt.Fprintln(os.Stderr, "cc-log:", err)
		return 127
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		fmt.Fprintln(os.Stderr, "cc-log:", err)
		return 127
	}
	return appendRecord(log, src, argv)
}

func appendRecord(log, src string, argv []string) int {
	dir, err := os.Getwd()
	if err == nil {
		var line []byte
		line, err = json.Marshal(compileRecord{Dir: dir, Src: src, Argv: argv})
		if err == nil {
			var f *os.File
			if f, err = os.OpenFile(log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
				_, err = f.Write(append(line, '\n'))
				err = errors.Join(err, f.Close())
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cc-log:", err)
		return 1
	}
	return 0
}

// recordBuild unpacks Redis into the work directory and builds it once through cc-log, which
// records each compile.
func (b *bench) recordBuild(redis string) ([]compileRecord, error) {
	tree, log := filepath.Join(b.work, "redis"), filepath.Join(b.work, "build.tsv")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		return nil, err
	}
	if _, err := output(nil, "tar", "-xzf", redis, "-C", tree, "--strip-components=1"); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	out, err := exec.Command("make", "-C", tree, fmt.Sprintf("-j%d", runtime.NumCPU()), "MALLOC=libc",
		"CFLAGS=-gno-column-info", "CC="+self+" cc-log "+log+" gcc").CombinedOutput()
	if err != nil {
		lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		fmt.Fprintln(os.Stderr, strings.Join(lines[max(0, len(lines)-30):], "\n"))
		return nil, fmt.Errorf("building Redis: %w", err)
	}
	records, err := readRecords(log)
	if err != nil {
		return nil, err
	}
	fmt.Printf("  one make -j%d build (MALLOC=libc, deps + src, CFLAGS=-gno-column-info) through a recording CC wrapper: %.1f s, %d compiles\n",
		runtime.NumCPU(), time.Since(start).Seconds(), len(records))
	return records, nil
}

func readRecords(path string) ([]compileRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var records []compileRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r compileRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		records = append(records, r)
	}
	return records, sc.Err()
}
