package history

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
	"time"
)

// sampleFleet is a fleet with two machines over two days and a leader that led for a while.
func sampleFleet() *Fleet {
	f := new(Fleet)
	for m := 0; m < 2*1440; m += 7 {
		f.Add("a", []Bucket{bucket(m, map[int]uint64{CacheHits: uint64(3 * m), OfferableSlots: 4, CPUTotalTicks: uint64(m)})})
	}
	f.Add("b", []Bucket{bucket(2000, map[int]uint64{CompilesDone: 1}), bucket(2001, map[int]uint64{CompilesDone: 5})})
	for m := 1900; m < 1990; m += 3 {
		f.Leading(at(m))
		f.Decided(Dispatch(m%leaderCols), at(m).Add(time.Second))
	}
	return f
}

func allViews(t *testing.T, f *Fleet, now time.Time) []View {
	t.Helper()
	var out []View
	for _, name := range Ranges {
		out = append(out, mustView(t, f, name, now))
		for _, id := range f.Machines() {
			v, err := f.MachineView(id, name, now)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
	}
	return out
}

func TestAFleetWrittenAndReadBackDrawsTheSameCharts(t *testing.T) {
	f := sampleFleet()
	file, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var g Fleet
	if err := g.UnmarshalBinary(file); err != nil {
		t.Fatal(err)
	}
	now := at(2010)
	if !reflect.DeepEqual(allViews(t, f, now), allViews(t, &g, now)) {
		t.Fatal("the charts read back differ")
	}
	again, _ := g.MarshalBinary()
	if !bytes.Equal(again, file) {
		t.Fatal("written again, the file differs")
	}
	g.Decided(Dispatched, at(1990)) // the open minute survives: counting goes on
	if got := lastN(points(t, mustView(t, &g, "1h", at(1990)), "dispatched"), 4); got[0] == "-" || got[3] != "1" {
		t.Fatalf("after reading back: %v", got)
	}
	t.Logf("%d bytes for %d machine minutes and %d led minutes", len(file), 2*1440/7+2, 30)
}

func TestAFileFromANewerBuildIsRefusedAsNewer(t *testing.T) {
	file := binary.AppendUvarint([]byte(fileMagic), FileVersion+1)
	file = append(file, "whatever a later layout holds"...)
	f := sampleFleet()
	before := allViews(t, f, at(2010))
	err := f.UnmarshalBinary(file)
	if !errors.Is(err, ErrNewerFormat) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("got %v; want ErrNewerFormat", err)
	}
	if !reflect.DeepEqual(before, allViews(t, f, at(2010))) {
		t.Fatal("a refused file changed the fleet")
	}
}

func TestAnUnreadableFileIsRefusedAsCorrupt(t *testing.T) {
	good, _ := sampleFleet().MarshalBinary()
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0x40
	badCols := binary.AppendUvarint([]byte(fileMagic), FileVersion)
	badCols = binary.AppendUvarint(badCols, machineCols+1)
	badCols = binary.BigEndian.AppendUint32(badCols, crc(badCols))
	for name, data := range map[string][]byte{
		"empty": nil, "not ours": []byte("{\"json\": true}"), "cut short": good[:len(good)-9],
		"a flipped bit": flipped, "version 0": append([]byte(fileMagic), 0, 0, 0, 0, 0), "other series": badCols,
		"only the magic": []byte(fileMagic),
	} {
		var f Fleet
		f.Add("keep", []Bucket{bucket(0, nil)})
		if err := f.UnmarshalBinary(data); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: got %v; want ErrCorrupt", name, err)
		}
		if ids := f.Machines(); len(ids) != 1 {
			t.Errorf("%s: a refused file changed the fleet: %v", name, ids)
		}
	}
}

// sealed is body as a file of this version, checksum and all, so fuzzing reaches the reader
// behind the checksum.
func sealed(body []byte) []byte {
	b := binary.AppendUvarint([]byte(fileMagic), FileVersion)
	b = append(b, body...)
	return binary.BigEndian.AppendUint32(b, crc(b))
}

// FuzzUnmarshalBinary: no file panics the reader or the views drawn from what it accepts, a
// refusal is ErrCorrupt or ErrNewerFormat, and what it accepts is written back readable. Each
// input is tried as a file and as the body of one.
func FuzzUnmarshalBinary(f *testing.F) {
	good, _ := sampleFleet().MarshalBinary()
	f.Add(good)
	f.Add(good[len(fileMagic)+1 : len(good)-4])
	f.Add([]byte(fileMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, file := range [][]byte{data, sealed(data)} {
			var g Fleet
			err := g.UnmarshalBinary(file)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNewerFormat) {
					t.Fatalf("refused with %v", err)
				}
				continue
			}
			for _, name := range Ranges {
				g.View(name, at(2010))
				for _, id := range g.Machines() {
					g.MachineView(id, name, at(2010))
				}
			}
			g.Leading(at(2011))
			again, _ := g.MarshalBinary()
			if err := new(Fleet).UnmarshalBinary(again); err != nil {
				t.Fatalf("an accepted file written back is unreadable: %v", err)
			}
		}
	})
}
