//go:build !judge

package exits

// impl is the chapter's code, called in this process under go test and in
// the subject under the grader.
var impl = Impl{Zero: Zero, Three: Three, Honest: Honest}
