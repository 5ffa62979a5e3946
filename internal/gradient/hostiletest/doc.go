// Package hostiletest is a hostile client of gradient-server, for the tests that show the
// server holds and for the gradient soak (bench/hostilegradient): a WebSocket written byte by
// byte (text frames first, headers declaring 2^62 bytes, undecodable first messages), a worker
// session that sends InitConnection again after its handshake, idle keep-alive connections
// and slowly dripped request heads, each from a chosen local address. It only measures and
// reports; callers decide what is acceptable.
package hostiletest
