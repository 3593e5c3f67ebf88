// Package chat is the chapter 02 server: a chat server that speaks chat
// protocol v1 (docs/protocols.md §1) with one goroutine per client.
//
// Each connection gets a reader goroutine, which logs the client in and then
// reads its frames, and, once logged in, a writer goroutine, which drains the
// client's outbox onto its socket. The logged-in clients are a map under one
// mutex; the mutex is held to read or change the map, never while writing to
// a socket. A client that stops reading fills its bounded outbox and is
// disconnected, so it can delay nobody else.
package chat
