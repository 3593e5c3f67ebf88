// Package jobserver is the chapter 03 server: a job server with a bounded
// queue and a fixed pool of workers that speaks the ThreadForge job protocol
// (docs/protocols.md §2) byte for byte.
//
// One reader goroutine per client frames and validates request lines, takes a
// job id from one server-wide counter and puts the job on a BoundedQueue. A
// fixed number of workers take jobs off the queue, compute them with the given
// code in serverlab/tools/given/jobs and append the answer to the connection's
// outbox; the connection's writer goroutine writes it, with a deadline, so a
// worker never waits for a client. When the queue is full, Put blocks; when a
// client's outbox is full, its reader waits: either way the reader stops
// reading, and TCP flow control pushes back on the client. Memory stays
// bounded however fast clients send and however slowly they read.
package jobserver
