package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Test vectors of gradient-protocol §2.2.
func TestSpecVectors(t *testing.T) {
	metrics := &WorkerMetrics{CPUUsagePct: 1.5, RAMFreeMB: 128, DiskSpeedMbps: Some[float32](-2.0)}
	tests := []struct {
		name    string
		msg     ClientMessage
		version uint16
		hex     string
	}{
		{
			name: "CacheQuery at v27 (pinned upstream; unchanged shape)",
			msg: &CacheQuery{JobID: "j", QueryID: "q", Paths: []string{"/a", "/b"}, Mode: QueryModePull,
				NarSizes: []Option[uint64]{None[uint64](), Some[uint64](300)}, External: true},
			version: 27,
			hex:     "15016a017102022f61022f6201020001ac0201",
		},
		{
			name: "CacheQuery at v30", msg: &CacheQuery{JobID: "j", QueryID: "q", Paths: []string{"/a", "/b"},
				Mode: QueryModePull, NarSizes: []Option[uint64]{None[uint64](), Some[uint64](300)}, External: true},
			version: 30,
			hex:     "15016a017102022f61022f6201020001ac0201",
		},
		{name: "WorkerMetrics at v27 leaves the since=28 default field out", msg: metrics, version: 27,
			hex: "050000c03f800101000000c000"},
		{name: "WorkerMetrics at v30", msg: metrics, version: 30, hex: "050000c03f800101000000c00000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := mustHex(t, tc.hex)
			got, err := Encode(tc.msg, tc.version)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("encoded % x\nwant    % x", got, want)
			}
			back, err := DecodeClientMessage(want, tc.version)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.msg, back); diff != "" {
				t.Errorf("decode(encode(m)) differs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWorkerMetricsSizes(t *testing.T) {
	m := &WorkerMetrics{CPUUsagePct: 1.5, RAMFreeMB: 128, DiskSpeedMbps: Some[float32](-2.0)}
	for version, size := range map[uint16]int{27: 13, 30: 14} {
		b, err := Encode(m, version)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != size {
			t.Errorf("WorkerMetrics at v%d is %d bytes, want %d", version, len(b), size)
		}
	}
}

// A default field absent below its since decodes as the zero value, even when the sender had
// set it (gradient-protocol §2.3).
func TestDefaultFieldDecodesAsZeroBelowItsVersion(t *testing.T) {
	m := &WorkerMetrics{CPUUsagePct: 1, DownloadSpeedMbps: Some[float32](9)}
	b, err := Encode(m, 27)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeClientMessage(b, 27)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.(*WorkerMetrics).DownloadSpeedMbps; got.Valid {
		t.Errorf("DownloadSpeedMbps at v27 = %+v, want None", got)
	}
	if _, err := DecodeClientMessage(b, 30); err == nil {
		t.Error("a v27 frame decoded at v30 should be truncated (one field short)")
	}
}

func TestVersionFrameVector(t *testing.T) {
	want := mustHex(t, "475241441b001b00")
	got := VersionFrame(VersionRange{27, 27})
	if !bytes.Equal(got, want) {
		t.Fatalf("VersionFrame(27..=27) = % x, want % x", got, want)
	}
	r, err := ParseVersionFrame(want)
	if err != nil || r != (VersionRange{27, 27}) {
		t.Errorf("ParseVersionFrame = %v, %v; want 27..=27", r, err)
	}
}

func TestVersionNewerThanPeerIsEncodeError(t *testing.T) {
	_, err := Encode(&HandoverDone{}, 28)
	var ee *EncodeError
	if !errors.As(err, &ee) {
		t.Fatalf("Encode(HandoverDone, 28) error = %v, want *EncodeError", err)
	}
	if ee.Since != 29 || ee.Version != 28 {
		t.Errorf("EncodeError = %+v, want Since 29, Version 28", ee)
	}
	if want := "HandoverDone exists since protocol 29, the peer speaks 28"; ee.Error() != want {
		t.Errorf("message %q, want %q", ee.Error(), want)
	}
	_, err = DecodeClientMessage([]byte{28}, 28)
	var uv UnknownVariantError
	if !errors.As(err, &uv) || uv != (UnknownVariantError{Type: "ClientMessage", Tag: 28, Version: 28}) {
		t.Errorf("decoding index 28 at v28: %v, want UnknownVariant{ClientMessage, 28, 28}", err)
	}
	if _, err := DecodeClientMessage([]byte{28}, 30); err != nil {
		t.Errorf("HandoverDone at v30: %v", err)
	}
}
