// Package grade is the course's grading engine, behind tools/cmd/grade (the
// students' and instructors' grader) and tools/maint/coursecheck (the
// maintainers' checks of the course).
//
// It refuses, before building, any reference in the student's chapter tree
// outside the chapter's allow-list (the gate: gate.go, gate_allow.go), names
// what would matter in-process (to teach: screen.go), compiles each chapter twice with the course's own copies of the test
// wiring, suites, given code and go.mod (course.sum or git HEAD) — the
// subject, the student's package with the race detector, and the judge, the
// wiring without any of the student's files (tests/judge) — runs every graded
// exercise alone with a time limit as a judge driving a subject, the subject
// in a sandbox (sandbox_linux.go), and awards an exercise's points only for a
// pass the judge reported, with no leak, race, crash or timeout. (Where the
// platform cannot pass descriptors, Windows, the test binary runs alone and
// a pass needs the harness's completion record.)
// Every lost point has a stated cause: build error, integrity, timeout,
// exited, panic, race, leak, failed, not run. The rubric (which exercises,
// worth what, checked by which test, screened how) is embedded from
// tools/internal/rubric. docs/grading.md says what the grader trusts, and why.
//
// Grade runs one grading; Flags are the command-line flags both commands
// share; the formats (text, gradescope, classroom, junit, json) write a Report.
package grade
