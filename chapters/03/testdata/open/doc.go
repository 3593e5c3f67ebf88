// Package jobserver is the chapter 03 server on the open track: a job server
// that speaks the ThreadForge job protocol (docs/protocols.md §2) byte for
// byte, in a design of your own.
//
// What is given: the parser, the bounded queue and the pool (exercises 3.1
// to 3.3; the suite checks their APIs directly), the answers (answer.go), the
// jobs themselves (serverlab/tools/given/jobs) and Config, which the tests and the
// program fill in. What the server must do is the lesson's protocol and its
// "design it yourself" section; the suite in tests/jobtest checks it over
// the network.
package jobserver
