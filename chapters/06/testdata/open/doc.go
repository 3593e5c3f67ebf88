// Package web is the chapter 06 server on the open track: the OSTEP
// concurrent web server (HTTP/1.0 subset of docs/protocols.md §4: static
// files under a document root, and CGI programs), in a design of your own.
//
// What is kept from the guided starter, as your chapter has it: ReadRequest,
// Docroot.Open, ServeStatic and RunCGI (exercises 6.1 to 6.4) and the
// deadlines (6.7), whose APIs the suite checks directly: stubs with their
// contracts until you write them (make hint EX=6.1). What is given: the
// Handler that serves one connection with them, and Config and Policy, which
// the tests and the program fill in. The master, the buffer, the workers and
// the order they serve in (6.5, 6.6) are yours; the suite in tests/webtest
// checks them.
//
// Your code may call only what the chapter's allow-list names, beside its
// own code and the standard library's ordinary packages: make allowed
// CH=06 lists it. make grade refuses anything else before it compiles
// (make status shows the refusal), however well go test passes.
package web
