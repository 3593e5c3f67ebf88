// Package jobserver is the chapter 03 server: a job server with a bounded
// queue and a fixed pool of workers that speaks the ThreadForge job protocol
// (docs/protocols.md §2) byte for byte.
//
// One reader goroutine per client frames and validates request lines, takes a
// job id from one server-wide counter and puts the job on a BoundedQueue. A
// fixed number of workers take jobs off the queue, compute them with the given
// code in serverlab/tools/jobs and write the answer to the job's connection,
// whose mutex keeps answers from interleaving. When the queue is full, Put
// blocks, the reader stops reading, and TCP flow control pushes back on the
// client: memory stays bounded however fast clients send.
package jobserver
