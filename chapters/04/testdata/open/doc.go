// Package stock is the chapter 04 server on the open track: a stock server
// that speaks the stock protocol (docs/protocols.md §3), in a design of your
// own.
//
// What is kept from the guided starter, as your chapter has it: the tree and
// the reader-writer lock (tree.go, rwlock.go), whose APIs the suite checks
// directly. They are still exercises 4.1, 4.3 and 4.4 (the tree's locking):
// stubs with their contracts until you write them (make hint EX=4.1). What
// is given: the file format (serverlab/tools/given/stockfile), the protocol
// (serverlab/tools/given/stockproto), rearm (a cheap way to keep a deadline
// ahead) and Config, which the tests and the program fill in. What the
// server must do is the lesson's protocol and its "design it yourself"
// section; the suite in tests/stocktest checks it over the network and in
// the stock file.
//
// Your code may call only what the chapter's allow-list names, beside its
// own code and the standard library's ordinary packages: make allowed
// CH=04 lists it. make grade refuses anything else before it compiles
// (make status shows the refusal), however well go test passes.
package stock
