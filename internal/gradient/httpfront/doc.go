// Package httpfront is gradient-server's public HTTP front: the listener that caps open
// connections in total and per remote address, the http.Server's timeouts for request heads,
// idle keep-alives and request bodies, and the counters of what it refused. When a cap is
// reached, an idle keep-alive connection (or one that has not sent its request head within a
// grace period) is closed to make room before a new connection is refused, so connections
// that do nothing cannot lock a well-behaved client out. WebSocket sessions (/proto, cache
// sessions) count against the caps for as long as they are open but are never evicted; their
// deadlines are the protocol's own.
package httpfront
