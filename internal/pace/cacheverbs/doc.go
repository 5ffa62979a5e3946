// Package cacheverbs is the part of FETCH, STORE and CACHE-DROP that every server of the cache
// verbs answers the same way, so pace-kv and a node's private tier cannot drift apart: the key
// check, the STORE value's check and canonicalization with the producer's roots, the rule that
// a stored value of a foreign generation is a miss, and the refusal each failure is answered
// with (pace-wire §1.13, pace-node §11).
//
// What differs between the servers stays with them: who may ask (pace-kv's password, the
// tier's this-machine-only rule), what they count, and the tier's upstream.
package cacheverbs
