package cacheverbs

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/store"
	"github.com/buildfleet/buildfleet/internal/pace/value"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// memStorage is an in-memory Storage that can be told to fail.
type memStorage struct {
	m       map[string][]byte
	failPut error
	failDel error
}

func newMem() *memStorage { return &memStorage{m: map[string][]byte{}} }

func (s *memStorage) Get(key []byte) ([]byte, error) {
	v, ok := s.m[string(key)]
	if !ok {
		return nil, store.ErrNotFound
	}
	return v, nil
}

func (s *memStorage) Put(key, v []byte) error {
	if s.failPut != nil {
		return s.failPut
	}
	s.m[string(key)] = v
	return nil
}

func (s *memStorage) Delete(key []byte) (bool, error) {
	if s.failDel != nil {
		return false, s.failDel
	}
	_, ok := s.m[string(key)]
	delete(s.m, string(key))
	return ok, nil
}

func encode(t testing.TB, v value.Value) []byte {
	t.Helper()
	b, err := value.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func storeFields(key, group, src, build string, v []byte) [][]byte {
	return [][]byte{[]byte(key), []byte(group), []byte(src), []byte(build), v}
}

func TestParseStoreAnswersEachFailureWithItsCode(t *testing.T) {
	good := encode(t, value.Value{Object: []byte("obj")})
	foreign := append([]byte{value.Generation + 1}, good[1:]...)
	tests := []struct {
		name    string
		fields  [][]byte
		failure Failure
		code    wire.Code
	}{
		{"empty key", storeFields("", "", "", "", good), FailureMalformedFrame, wire.CodeMalformedFrame},
		{"reserved key prefix", storeFields("\x01cohort", "", "", "", good), FailureMalformedFrame, wire.CodeMalformedFrame},
		{"key over the bound", storeFields(strings.Repeat("k", store.MaxKeyLen+1), "", "", "", good), FailureMalformedFrame, wire.CodeMalformedFrame},
		{"wrong arity", [][]byte{[]byte("k"), good}, FailureMalformedFrame, wire.CodeMalformedFrame},
		{"not a compile value", storeFields("k", "", "", "", []byte("plain bytes")), FailureNotAValue, wire.CodeMalformedValue},
		{"empty value", storeFields("k", "", "", "", nil), FailureNotAValue, wire.CodeMalformedValue},
		{"foreign generation", storeFields("k", "", "", "", foreign), FailureForeignGeneration, wire.CodeForeignValueGeneration},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseStore(tt.fields)
			if got := Classify(err); got != tt.failure {
				t.Fatalf("Classify(%v) = %d, want %d", err, got, tt.failure)
			}
			r := Refusal(err)
			if r.Code != tt.code || r.Message != err.Error() {
				t.Fatalf("Refusal = %v, want code %s carrying %q", r, tt.code, err)
			}
		})
	}
}

func TestParseStoreCanonicalizesWithTheProducersRoots(t *testing.T) {
	dep := value.Region{Grammar: value.GccDepfile, Text: []byte("a.o: /home/u/src/a.c /home/u/b/gen.h /usr/include/x.h\n")}
	in := encode(t, value.Value{Object: []byte("obj"), Regions: []value.Region{{}, {}, dep}})
	r, err := ParseStore(storeFields("k", "grp", "/home/u/src", "/home/u/b", in))
	if err != nil {
		t.Fatal(err)
	}
	v, err := value.Decode(r.Value)
	if err != nil {
		t.Fatal(err)
	}
	want := "a.o: <SRCROOT>/a.c <BUILDTREE>/gen.h /usr/include/x.h\n"
	if string(v.Regions[2].Text) != want || string(v.Object) != "obj" {
		t.Fatalf("canonical depfile %q object %q", v.Regions[2].Text, v.Object)
	}
	if string(r.Key) != "k" || string(r.PrefetchGroup) != "grp" {
		t.Fatalf("key %q group %q", r.Key, r.PrefetchGroup)
	}
}

func TestParseStoreKeepsTheValueWhenNothingChanges(t *testing.T) {
	in := encode(t, value.Value{Object: []byte("obj"), Regions: []value.Region{{Text: []byte("no paths here")}}})
	r, err := ParseStore(storeFields("k", "", "/src", "", in))
	if err != nil {
		t.Fatal(err)
	}
	if &r.Value[0] != &in[0] {
		t.Fatal("an unchanged value was copied")
	}
}

func TestPutFailureIsAStorageWriteWithoutTheServersPaths(t *testing.T) {
	st := newMem()
	st.failPut = fmt.Errorf("write /var/cache/pace/objects/ab/tmp-1: %w", store.ErrWriteFailed)
	err := Put(st, StoreRequest{Key: []byte("k"), Value: []byte{1}})
	if Classify(err) != FailureStorageWrite || !errors.Is(err, store.ErrWriteFailed) {
		t.Fatalf("Put error %v", err)
	}
	if r := Refusal(err); r.Code != wire.CodeStorageWriteFailed || strings.Contains(r.Message, "/var/cache") {
		t.Fatalf("refusal %v leaks the path or has the wrong code", r)
	}
}

func TestFetchTreatsAForeignGenerationAsAMiss(t *testing.T) {
	st := newMem()
	good := encode(t, value.Value{Object: []byte("obj")})
	st.m["cur"] = good
	st.m["old"] = append([]byte{value.Generation + 1}, good[1:]...)
	if v, hit, err := Fetch(st, []byte("cur")); !hit || err != nil || !bytes.Equal(v, good) {
		t.Fatalf("current value: hit=%v err=%v", hit, err)
	}
	for _, key := range []string{"old", "absent"} {
		if _, hit, err := Fetch(st, []byte(key)); hit || err != nil {
			t.Fatalf("%s: hit=%v err=%v, want a plain miss", key, hit, err)
		}
	}
	if _, _, err := Fetch(st, nil); Classify(err) != FailureMalformedFrame {
		t.Fatalf("empty key: %v", err)
	}
}

func TestDropReportsPresenceAndFailures(t *testing.T) {
	st := newMem()
	st.m["k"] = []byte{1}
	if present, err := Drop(st, []byte("k")); !present || err != nil {
		t.Fatalf("first drop: %v %v", present, err)
	}
	if present, err := Drop(st, []byte("k")); present || err != nil {
		t.Fatalf("second drop: %v %v", present, err)
	}
	st.failDel = errors.New("unlink: permission denied")
	if _, err := Drop(st, []byte("k")); Classify(err) != FailureStorageWrite {
		t.Fatalf("failed delete: %v", err)
	}
	if _, err := Drop(st, []byte{store.ReservedPrefixMember}); Classify(err) != FailureMalformedFrame {
		t.Fatalf("reserved key: %v", err)
	}
}

func TestClassifyNil(t *testing.T) {
	if Classify(nil) != FailureNone {
		t.Fatal("nil is not a failure")
	}
}
