// Package web is the chapter 06 server: the OSTEP concurrent web server, with
// a master that accepts connections into a bounded buffer and a fixed pool of
// workers that serve them, in first-in-first-out order (FIFO) or shortest file
// first (SFF). It speaks the HTTP/1.0 subset of docs/protocols.md §4: static
// files under a document root, and CGI programs whose output goes straight to
// the client.
//
// The pieces, in the order the exercises build them:
//
//	ReadRequest      request line and headers, with limits       (ex 6.1)
//	Docroot.Open     a URI to a file that cannot leave the root  (ex 6.2)
//	ServeStatic      the exact 200 response, streamed            (ex 6.3)
//	RunCGI           a program's output to the client            (ex 6.4)
//	Server, fifo     master, bounded buffer, worker pool         (ex 6.5)
//	sffQueue         smallest file first, with a heap            (ex 6.6)
//	armRead/armWrite deadlines that real clients need            (ex 6.7)
package web
