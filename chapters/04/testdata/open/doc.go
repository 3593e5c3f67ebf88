// Package stock is the chapter 04 server on the open track: a stock server
// that speaks the stock protocol (docs/protocols.md §3), in a design of your
// own.
//
// What is given: the tree and the reader-writer lock (exercises 4.1 and
// 4.3; the suite checks their APIs directly), the file format
// (serverlab/tools/given/stockfile), the protocol (serverlab/tools/given/stockproto),
// rearm (a cheap way to keep a deadline ahead) and Config, which the tests
// and the program fill in. What the server must do is the lesson's protocol
// and its "design it yourself" section; the suite in tests/stocktest checks
// it over the network and in the stock file.
package stock
