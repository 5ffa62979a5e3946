package ccfront

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/buildfleet/buildfleet/internal/pace/ccargs"
	"github.com/buildfleet/buildfleet/internal/pace/hitmemo"
	"github.com/buildfleet/buildfleet/internal/pace/value"
)

// received is a fetched result: the object in a temporary file beside the output, the text
// regions localized to this machine.
type received struct {
	objectTmp string
	regions   []value.Region
}

func (rc received) discard() {
	if rc.objectTmp != "" {
		syscall.Unlink(rc.objectTmp)
	}
}

// hit fetches the memo's object key and reproduces the compile as pace-cc-full's hit does
// (pace-wire §3.7); it returns "" when the compile was served.
func (f *front) hit(e hitmemo.Entry) string {
	t0 := f.p.Now()
	var rc received
	hit, err := fetch(f.cfg, e.ObjectKey.Hex(), func(body io.Reader, n uint32) error {
		var rerr error
		rc, rerr = f.receive(e, body, n)
		return rerr
	})
	lookup := f.p.Now().Sub(t0)
	switch {
	case err != nil:
		rc.discard()
		return "cache: " + err.Error()
	case !hit:
		return "the cache has no " + e.ObjectKey.Hex()[:16]
	}
	if err := f.replay(e, rc); err != nil {
		rc.discard()
		return err.Error()
	}
	if f.cfg.verbose {
		fmt.Fprintf(f.p.Stderr, "pace-cc: HIT (direct) %s %s\n", e.ObjectKey.Hex()[:16], e.Source)
	}
	f.record(e, lookup)
	return ""
}

// receive reads one value: its object into a temporary file next to the output, through one
// small buffer on a raw descriptor (lean on the hit path), its regions into memory.
func (f *front) receive(e hitmemo.Entry, body io.Reader, n uint32) (received, error) {
	fd, tmp, err := createBeside(e.Output, f.p.Now())
	if err != nil {
		return received{}, err
	}
	var buf [4 << 10]byte
	regions, rerr := value.ReadStream(body, n, fdWriter(fd), buf[:])
	if err := syscall.Close(fd); rerr == nil {
		rerr = err
	}
	rc := received{objectTmp: tmp}
	if rerr != nil {
		return rc, rerr
	}
	roots := value.Roots{SrcRoot: f.cfg.srcRoot, BuildTree: f.cfg.buildRoot}
	rc.regions = value.Localize(value.Value{Regions: regions}, roots).Regions
	return rc, nil
}

// replay puts the outputs in place, then replays the streams: the guard first (every
// dependency the depfile names that this machine answers for exists here), the depfile, the
// object, stdout, stderr.
func (f *front) replay(e hitmemo.Entry, rc received) error {
	var dep []byte
	if len(rc.regions) > value.RegionDepfile {
		dep = rc.regions[value.RegionDepfile].Text
	}
	roots := ccargs.Roots{Source: f.cfg.srcRoot, Build: f.cfg.buildRoot}
	for _, d := range value.DepfileDependencies(dep) {
		if strings.HasPrefix(d, "/") && roots.Relativize(d) == d {
			continue // toolchain or system header: covered by the key
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(f.p.Cwd, d)
		}
		var st syscall.Stat_t
		if syscall.Stat(d, &st) != nil {
			return fmt.Errorf("stale hit: %s is missing here", d)
		}
	}
	if e.Depfile != "" {
		if dep == nil {
			return fmt.Errorf("stale hit: the cached result has no depfile")
		}
		if err := writeAtomic(e.Depfile, dep, f.p.Now()); err != nil {
			return fmt.Errorf("writing the depfile: %w", err)
		}
	}
	if err := syscall.Rename(rc.objectTmp, e.Output); err != nil {
		return fmt.Errorf("writing the object: %w", err)
	}
	if len(rc.regions) > value.RegionStdout {
		f.p.Stdout.Write(rc.regions[value.RegionStdout].Text)
	}
	if len(rc.regions) > value.RegionStderr {
		f.p.Stderr.Write(rc.regions[value.RegionStderr].Text)
	}
	return nil
}

// statsLine is one line of pace-cc's statistics log, in ccstats.Record's layout (a test holds
// the two together; ccstats itself links the HTML report).
type statsLine struct {
	Time     int64   `json:"t"`
	Outcome  string  `json:"outcome"`
	Via      string  `json:"via"`
	Group    string  `json:"group"`
	Source   string  `json:"tu"`
	TotalMS  float64 `json:"ms"`
	LookupMS float64 `json:"lookup_ms"`
	CacheMS  float64 `json:"io_ms"`
}

// record appends the hit to the statistics log; a failure never fails the build.
func (f *front) record(e hitmemo.Entry, lookup time.Duration) {
	now := f.p.Now()
	line, err := statsJSON(f.cfg.group, e.Source, now, ms(now.Sub(f.start)), ms(lookup))
	if err == nil {
		_ = appendLine(filepath.Join(f.cfg.stateDir, "invocations.log"), append(line, '\n'))
	}
}

// statsJSON writes the line by hand: encoding/json builds its encoders by reflection on first
// use, a twentieth of a hit's time. Text that is not valid UTF-8 goes through encoding/json,
// which repairs it the same way pace-cc-full's line does.
func statsJSON(group, source string, now time.Time, totalMS, lookupMS float64) ([]byte, error) {
	if !utf8.ValidString(group) || !utf8.ValidString(source) {
		return json.Marshal(statsLine{Time: now.UnixMilli(), Outcome: "hit", Via: "direct", Group: group,
			Source: source, TotalMS: totalMS, LookupMS: lookupMS, CacheMS: lookupMS})
	}
	b := make([]byte, 0, 128+len(group)+len(source))
	b = strconv.AppendInt(append(b, `{"t":`...), now.UnixMilli(), 10)
	b = append(b, `,"outcome":"hit","via":"direct","group":`...)
	b = appendJSONString(b, group)
	b = appendJSONString(append(b, `,"tu":`...), source)
	b = strconv.AppendFloat(append(b, `,"ms":`...), totalMS, 'f', -1, 64)
	b = strconv.AppendFloat(append(b, `,"lookup_ms":`...), lookupMS, 'f', -1, 64)
	b = strconv.AppendFloat(append(b, `,"io_ms":`...), lookupMS, 'f', -1, 64)
	return append(b, '}'), nil
}

// appendJSONString quotes valid UTF-8 s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
