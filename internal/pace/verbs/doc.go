// Package verbs is the request and reply bodies of pace's scheduler, compile
// and node-proof verbs (pace-wire §1.13, pace-wire §1.14, pace-wire §1.15):
// LEASE and its grant, RELEASE, REGISTER and its Ok body, HEARTBEAT, WITHDRAW,
// NODE-ANNOUNCE, COMPILE and its reply, MINT-TICKET, NODE-CHALLENGE and
// PROVE-NODE, and the nested capacity and load records of pace-wire §1.14.
//
// Every body is a Go struct with an Append method that writes its fields and a
// Parse function that reads them back. Request parsers take the fields a server
// split with the verb's exact arity; reply parsers take the Ok payload a client
// read. A parser checks exact integer widths, UTF-8 of the text a receiver
// keeps, and the size bounds of pace-wire §1.10, and refuses with an *Error
// that names the field and carries the wire code to answer with. A bound
// exceeded is reported apart from any other fault (ErrTooLong vs ErrMalformed)
// so that `…_field_too_long_total` counts apart from `…_malformed_total`.
//
// CompileRequest.Correlation is the one computation of the reply
// correlation digest, shared by the worker that signs it and pace-cc that
// checks it.
//
// The package is pure and light: pace-cc imports it, so it depends on the
// wire and cachekey packages and the standard library only.
package verbs
