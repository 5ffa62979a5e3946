package wsconn

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// gradient-protocol §1.2: both sides send first, then read; the agreed version is the lower
// newest.
func TestAgreementBetweenOurSides(t *testing.T) {
	url, accepted := serveWorkers(t, Options{})
	worker := dialServer(t, url, DialOptions{Options: Options{Versions: wire.VersionRange{Oldest: 30, Newest: 31}}})
	server := acceptOne(t, accepted)
	if v := worker.Version(); v != 0 {
		t.Fatalf("Version before agreement = %d, want 0", v)
	}
	agreeBoth(t, worker, server)
	for name, v := range map[string]uint16{"worker": worker.Version(), "server": server.Version(),
		"worker writer": worker.Writer.Version(), "server reader": server.Reader.Version()} {
		if v != 30 {
			t.Errorf("%s agreed %d, want 30", name, v)
		}
	}
}

// gradient-protocol §1.2 against a peer announcing other ranges: the lower newest when they
// overlap, close 1002 with the exact reason when they do not.
func TestAgreementWithForeignRanges(t *testing.T) {
	for _, tc := range []struct {
		peer       wire.VersionRange
		wantAgreed uint16
		wantReason string
	}{
		{peer: wire.VersionRange{Oldest: 30, Newest: 30}, wantAgreed: 30},
		{peer: wire.VersionRange{Oldest: 29, Newest: 30}, wantAgreed: 30},
		{peer: wire.VersionRange{Oldest: 30, Newest: 33}, wantAgreed: 30},
		{peer: wire.VersionRange{Oldest: 31, Newest: 32}, wantReason: "no shared protocol version: ours 30..=30, peer 31..=32"},
		{peer: wire.VersionRange{Oldest: 27, Newest: 27}, wantReason: "no shared protocol version: ours 30..=30, peer 27..=27"},
	} {
		t.Run(tc.peer.String(), func(t *testing.T) {
			logs := &logRecorder{}
			url, accepted := serveWorkers(t, Options{Logger: slog.New(logs)})
			raw := rawDial(t, url)
			reads := raw.reading()
			raw.write(wire.VersionFrame(tc.peer))
			server := acceptOne(t, accepted)

			v, err := server.Agree(testCtx(t))
			if got, _ := wire.ParseVersionFrame(reads.next(t)); got != wire.ProtoVersions() {
				t.Errorf("server announced %v, want %v", got, wire.ProtoVersions())
			}
			if tc.wantReason == "" {
				if err != nil || v != tc.wantAgreed {
					t.Fatalf("Agree = %d, %v; want %d", v, err, tc.wantAgreed)
				}
				return
			}
			assertAgreementFailure(t, err, tc.wantReason)
			assertClosed(t, reads, CloseProtocolError, tc.wantReason)
			if !logs.warned("reason", tc.wantReason) {
				t.Errorf("reason %q not logged at warn", tc.wantReason)
			}
		})
	}
}

// gradient-protocol §1.2: a first frame without GRAD comes from protocol 26 or older.
func TestPreProtoPeerIsClosed(t *testing.T) {
	const want = "peer protocol is older than 30"
	for name, first := range map[string][]byte{
		"rkyv frame":     {0x07, 0, 0, 0, 0x10, 0, 0, 0, 'w', 'o', 'r', 'k'},
		"short GRAD":     []byte("GRAD\x1e\x00\x1e"),
		"long GRAD":      []byte("GRAD\x1e\x00\x1e\x00\x00"),
		"empty frame":    {},
		"wrong magic":    []byte("GRAF\x1e\x00\x1e\x00"),
		"lowercase grad": []byte("grad\x1e\x00\x1e\x00"),
	} {
		t.Run(name, func(t *testing.T) {
			logs := &logRecorder{}
			url, accepted := serveWorkers(t, Options{Logger: slog.New(logs)})
			raw := rawDial(t, url)
			reads := raw.reading()
			raw.write(first)
			server := acceptOne(t, accepted)

			_, _, err := server.Read(testCtx(t))
			assertAgreementFailure(t, err, want)
			reads.next(t) // our version frame went first
			assertClosed(t, reads, CloseProtocolError, want)
			if !logs.warned("reason", want) {
				t.Errorf("reason not logged at warn")
			}
			var ae *wire.AgreementError
			if !errors.As(server.Err(), &ae) {
				t.Errorf("Err() = %v after a failed agreement, want the *wire.AgreementError", server.Err())
			}
		})
	}
}

// A server that dials a worker keeps the failure reason (its offline reason); the worker it
// dialed announced a range we do not speak.
func TestDialedWorkerAgreementFailureCarriesReason(t *testing.T) {
	const want = "no shared protocol version: ours 30..=30, peer 31..=32"
	url, accepted := serveRaw(t)
	server, err := DialWorker(testCtx(t), url, DialOptions{})
	if err != nil {
		t.Fatalf("DialWorker: %v", err)
	}
	t.Cleanup(server.Abort)
	worker := acceptOne(t, accepted)
	reads := worker.reading()
	worker.write(wire.VersionFrame(wire.VersionRange{Oldest: 31, Newest: 32}))

	err = server.Send(testCtx(t), &wire.Authenticate{WorkerID: "w"})
	assertAgreementFailure(t, err, want)
	reads.next(t)
	assertClosed(t, reads, CloseProtocolError, want)
	if err := server.Send(testCtx(t), &wire.Authenticate{WorkerID: "w"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after failed agreement = %v, want ErrClosed", err)
	}
}

// A text message before the session closes the socket with 1003 at once, even before the
// version frame: waiting behind it would hold the connection until the handshake deadline.
func TestTextMessageBeforeTheSessionCloses(t *testing.T) {
	url, accepted := serveWorkers(t, Options{})
	raw := rawDial(t, url)
	reads := raw.reading()
	if err := raw.ws.Write(testCtx(t), 1 /* text */, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	server := acceptOne(t, accepted)
	if _, _, err := server.Read(testCtx(t)); !errors.Is(err, ErrTextMessage) {
		t.Fatalf("Read = %v, want ErrTextMessage", err)
	}
	reads.next(t) // our version frame
	assertClosed(t, reads, CloseUnsupportedData, "text messages are not part of the protocol")
}

// Once the session runs, text messages are read, counted against the cap and dropped
// (gradient-protocol §1.1).
func TestTextMessagesInTheSessionAreIgnored(t *testing.T) {
	url, accepted := serveWorkers(t, Options{})
	raw := rawDial(t, url)
	raw.reading()
	raw.write(wire.VersionFrame(wire.ProtoVersions()))
	server := acceptOne(t, accepted)
	if _, err := server.Agree(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	server.EnterSession()
	if err := raw.ws.Write(testCtx(t), 1, []byte(`{"json":"ignored"}`)); err != nil {
		t.Fatal(err)
	}
	raw.writeMessage(&wire.RequestJob{Kind: wire.JobKindBuild})
	m, release, err := server.Read(testCtx(t))
	defer release()
	if rj, ok := m.(*wire.RequestJob); err != nil || !ok || rj.Kind != wire.JobKindBuild {
		t.Fatalf("Read = %#v, %v; want RequestJob{Build}", m, err)
	}
}

func assertAgreementFailure(t *testing.T, err error, reason string) {
	t.Helper()
	var ae *wire.AgreementError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v is not a *wire.AgreementError", err)
	}
	if ae.Code != CloseProtocolError || ae.Reason != reason {
		t.Errorf("agreement error = %d %q, want %d %q", ae.Code, ae.Reason, CloseProtocolError, reason)
	}
}

func assertClosed(t *testing.T, reads *rawReads, code int, reason string) {
	t.Helper()
	ce := reads.closed(t)
	if int(ce.Code) != code || ce.Reason != reason {
		t.Errorf("peer saw close %d %q, want %d %q", ce.Code, ce.Reason, code, reason)
	}
}
