//go:build !judge

package codec

// impl is the chapter's code, called in this process under go test and in
// the subject under the grader.
var impl = Impl{ReadFrame: ReadFrame, Shout: Shout}
