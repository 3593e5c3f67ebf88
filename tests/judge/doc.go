// Package judge lets a suite check a student's code that runs in another
// process, so that the verdict is computed where the student's code never
// runs.
//
// tools/cmd/grade builds every chapter's tests twice. The subject is today's
// test binary: the student's package, the course's wiring, built with -race.
// The judge is the same wiring built with the build tag "judge" and without
// any file of the student's: its Impl values come from Remote, and every call
// of one of their functions travels over a Unix socket to the subject, which
// makes the real call and sends back the results. The suites run unchanged
// in the judge; what the judge's testing package prints is the verdict, and
// the student's code cannot reach it.
//
// Values cross the socket by what they are:
//
//   - data (numbers, strings, byte slices, structs, slices and maps of data)
//     is copied;
//   - errors are copied with their text and with what errors.Is says of them
//     against every sentinel both sides know (Sentinel) and every error the
//     other side sent before, so that errors.Is works across the socket;
//   - functions and objects behind an interface (a server, a queue, a
//     callback of the suite's) stay where they are and are called through a
//     handle: a function arrives as a function, an object as a proxy of its
//     interface type (Proxy registers one);
//   - listeners and connections travel as file descriptors, so that the
//     student's server accepts and reads real sockets;
//   - a DataReader (data and one of testing/iotest's read patterns) is
//     copied, once: the other process reads its own copy, Read for Read
//     as at home, instead of one round trip per Read (datareader.go).
//
// A subject that dies, hangs or lies can only lose points: a call to a dead
// subject returns zero values and an error, and tools/cmd/grade states the cause
// it saw (the subject's exit status), never text the subject printed.
package judge
