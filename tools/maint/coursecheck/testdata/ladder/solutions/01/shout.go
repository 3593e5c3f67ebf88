//go:build !plan9

package ladderfix

import "strings"

// shout is a helper in a file only the solution has: the ladder must bring
// the file in with Greet, which calls it.
func shout(s string) string { return strings.ToUpper(s) }
