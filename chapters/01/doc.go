// Package discovery is the chapter 01 server: an iterative discovery
// (registration) server that speaks chat protocol v1 (docs/protocols.md §1).
//
// One goroutine does everything: accept a connection, read one REGISTRATION
// frame, record the user in users.txt, answer OK or FAIL, close, accept the
// next. It is the simplest server there is, and its limit is the point of the
// chapter: while it serves one client, every other client waits.
package discovery
