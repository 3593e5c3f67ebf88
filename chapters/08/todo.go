package chatscale

import "serverlab/tools/given/lab"

// notImplemented is what a stub returns until its exercise is written: an
// error that wraps lab.ErrNotImplemented and names the exercise, so that the
// tests report it unsolved. Stubs call it rather than lab.NotImplemented so
// that, once you write a stub's body, its file imports nothing that only the
// stub used. Delete this file when every exercise of the chapter is done.
func notImplemented(exercise, what string) error { return lab.NotImplemented(exercise, what) }
