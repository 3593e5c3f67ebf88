// Package chatcore is the chapter 07 server: chatcore
// (github.com/ebroschin/chatcore) in Go, byte-compatible on the wire, with
// the original's limitations removed.
//
// Every connection has two goroutines: a reader, which decodes frames and
// runs their handlers one at a time, and a writer, the only code that writes
// to the socket, which drains the connection's outbox (bounded in bytes). The
// shared state — sessions, channel membership, the cached users and channels
// — is under one mutex that is never held across I/O. Chat messages go
// through one committer goroutine, which writes every message that arrived
// while the previous transaction was committing in one transaction (group
// commit), and broadcasts them only after the commit: an echo is a promise
// that the message is on disk.
package chatcore
