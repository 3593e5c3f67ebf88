// Package chatcore is the chapter 07 server on the open track: chatcore
// (github.com/ebroschin/chatcore) in Go, byte-compatible on the wire, with
// the original's limitations removed, in a design of your own.
//
// What is given: the store (Store, SQLiteStore), the codec
// (serverlab/tools/given/chatcore/proto), the accept loop's helpers
// (serverlab/tools/given/lab), and Config, which the tests and the program fill in.
// What the server must do is the lesson's protocol and its "design it
// yourself" section; the suite in tests/chatcoretest checks it, over the
// network and in the database file.
//
// Your code may call only what the chapter's allow-list names, beside its
// own code and the standard library's ordinary packages: make allowed
// CH=07 lists it. make grade refuses anything else before it compiles
// (make status shows the refusal), however well go test passes.
package chatcore
