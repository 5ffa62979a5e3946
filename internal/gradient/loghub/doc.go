// Package loghub carries build logs to live followers (gradient-server §16): an in-memory
// fan-out of the log chunks the server stores, and the server-sent-events format they travel
// in, both ways.
//
// The Hub never blocks its publisher, the session's report applier: every follower has a
// bounded queue, and one that falls behind loses its queue and is told so (Batch.Lagged), to
// read what it missed from the store instead. Followers are capped per build and in total.
// Nothing in it waits on time, so it takes no clock; heartbeats belong to the HTTP stream.
//
// Encoder writes a log as SSE events whose ids are "<attempt>:<byte offset>" and never
// splits a UTF-8 character across two events; Reader decodes a stream with bounded lines
// and events; ParseEventID reads a Last-Event-ID.
package loghub
