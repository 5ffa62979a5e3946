package verbs

import "github.com/buildfleet/buildfleet/internal/pace/wire"

// COMPILE arities (pace-wire §1.12, pace-wire §1.13).
const (
	CompileArity      = 10
	CompileReplyArity = 6
)

// CompileRequest is COMPILE: `leaseToken, fingerprint, args(nested),
// source(envelope), codecs, sourceName, compileDir, compileDirReplacement,
// sourceRoot, sourceRootReplacement`.
type CompileRequest struct {
	LeaseToken  string
	Fingerprint string
	// Args is one entry per argument, never a joined string; the worker
	// vets each against its allowlist.
	Args []string
	// Source is the enveloped preprocessed TU exactly as received: it
	// aliases the request's fields, and the worker opens it (and counts
	// the envelope refusals) only after checking the lease.
	Source []byte
	Codecs wire.CodecList // what the client can decode
	// SourceName is the client's source path as its own compile would
	// record it.
	SourceName string
	// The directory pairs are both empty or both set.
	CompileDir, CompileDirReplacement string
	SourceRoot, SourceRootReplacement string
}

// Append appends the request payload.
func (r CompileRequest) Append(dst []byte) []byte {
	dst = wire.AppendStringField(dst, r.LeaseToken)
	dst = wire.AppendStringField(dst, r.Fingerprint)
	dst = appendTextList(dst, r.Args)
	dst = wire.AppendField(dst, r.Source)
	dst = r.Codecs.AppendField(dst)
	for _, s := range [...]string{r.SourceName, r.CompileDir, r.CompileDirReplacement, r.SourceRoot, r.SourceRootReplacement} {
		dst = wire.AppendStringField(dst, s)
	}
	return dst
}

// ParseCompile reads a COMPILE request. A truncated or malformed argument
// list decodes to nothing: the request is refused whole rather than run
// with a prefix of its arguments.
func ParseCompile(fields [][]byte) (CompileRequest, error) {
	p := newParser(wire.OpCompile)
	if !p.arity(fields, CompileArity) {
		return CompileRequest{}, p.result()
	}
	r := CompileRequest{
		LeaseToken:            p.required(fields[0], "leaseToken", MaxLeaseToken),
		Fingerprint:           p.required(fields[1], "fingerprint", MaxFingerprint),
		Args:                  p.args(fields[2], "args"),
		Source:                fields[3],
		Codecs:                p.codecs(fields[4], "codecs"),
		SourceName:            p.raw(fields[5], "sourceName", MaxPath),
		CompileDir:            p.raw(fields[6], "compileDir", MaxPath),
		CompileDirReplacement: p.raw(fields[7], "compileDirReplacement", MaxPath),
		SourceRoot:            p.raw(fields[8], "sourceRoot", MaxPath),
		SourceRootReplacement: p.raw(fields[9], "sourceRootReplacement", MaxPath),
	}
	p.pair(r.CompileDir, r.CompileDirReplacement, "compileDir")
	p.pair(r.SourceRoot, r.SourceRootReplacement, "sourceRoot")
	if p.failed() {
		return CompileRequest{}, p.result()
	}
	return r, nil
}

func (p *parser) args(f []byte, field string) []string {
	entries := p.list(f, field, MaxCompileArgs)
	if len(entries) == 0 {
		return nil
	}
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = p.raw(e, field, MaxPath)
	}
	if p.failed() {
		return nil
	}
	return out
}

// pair refuses a half-filled directory pair.
func (p *parser) pair(dir, replacement, field string) {
	if !p.failed() && (dir == "") != (replacement == "") {
		p.malformed(field, "half-filled pair: both the directory and its replacement, or neither")
	}
}

// CompileReply is COMPILE's Ok body, exactly 6 fields: `[u32 exitCode]
// [object envelope, empty if the compile failed][stdout][stderr]
// [correlation 32-hex][signature 64 bytes or empty]`. A non-zero exit code
// is a successful exchange.
type CompileReply struct {
	ExitCode uint32
	Object   []byte // enveloped; aliases the payload when parsed
	Stdout   []byte // aliases the payload when parsed
	Stderr   []byte // aliases the payload when parsed
	// Correlation binds the reply to its request (pace-wire §3.9.2 step 4).
	Correlation string
	Signature   []byte // 64 bytes, or nil
}

// Append appends the Ok payload.
func (r CompileReply) Append(dst []byte) []byte {
	dst = wire.AppendU32Field(dst, r.ExitCode)
	dst = wire.AppendField(dst, r.Object)
	dst = wire.AppendField(dst, r.Stdout)
	dst = wire.AppendField(dst, r.Stderr)
	dst = wire.AppendStringField(dst, r.Correlation)
	return wire.AppendField(dst, r.Signature)
}

// ParseCompileReply reads COMPILE's Ok payload (client side). The client
// bounds the payload itself before reading it; nothing here is copied but
// the correlation and signature.
func ParseCompileReply(payload []byte) (CompileReply, error) {
	p := newParser(wire.OpCompile)
	f := p.split(payload, CompileReplyArity)
	if p.failed() {
		return CompileReply{}, p.result()
	}
	r := CompileReply{
		ExitCode:    p.u32(f[0], "exitCode"),
		Object:      f[1],
		Stdout:      f[2],
		Stderr:      f[3],
		Correlation: p.correlation(f[4], "correlation"),
		Signature:   p.optExact(f[5], "signature", SignatureLen),
	}
	if p.failed() {
		return CompileReply{}, p.result()
	}
	return r, nil
}

func (p *parser) correlation(f []byte, field string) string {
	if p.failed() {
		return ""
	}
	if len(f) != CorrelationLen {
		p.malformed(field, "%d bytes where %d lowercase hex digits are required", len(f), CorrelationLen)
		return ""
	}
	for _, c := range f {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			p.malformed(field, "not lowercase hex")
			return ""
		}
	}
	return string(f)
}
