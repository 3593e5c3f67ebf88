package discoverytest

import (
	"path/filepath"
	"strings"

	"serverlab/tests/testkit"
	"serverlab/tools/given/users"
)

// checkFileSizeExact: the bound is the file's size, MaxFileSize bytes
// included. A registration whose line brings the file to exactly
// users.MaxFileSize is within what every reader reads, so it must succeed;
// checkFileSizeBound holds the other side (one byte past is refused). A
// store that refuses at size + len(line) >= MaxFileSize turns away a user
// whom every reader would have found.
func checkFileSizeExact(k *testkit.T, impl Impl) {
	k.Helper()
	path := filepath.Join(k.TempDir(), "users.txt")
	amy := users.User{Name: "amy", Password: "pw", IP: "127.0.0.1", Port: 1}
	content := strings.Repeat("#", users.MaxFileSize-len(amy.Line())-1) + "\n"
	if err := testkit.WriteFile(path, []byte(content), 0o600); err != nil {
		k.Fatalf("writing %s: %v", path, err)
	}
	s, file := openFaulty(k, impl, path)
	file.noSync = true
	if err := s.Register(amy); err != nil {
		k.Fatalf("store opened on a file of %d bytes (one long line that is not a user); sent Register(%v), "+
			"whose line of %d bytes makes the file exactly users.MaxFileSize (%d) bytes\n  want: nil\n   got: %v\n"+
			"Likely cause: the bound refuses a file that reaches MaxFileSize, not one that passes it: a reader "+
			"reads MaxFileSize bytes, so the line fits (refuse only size + len(line) > users.MaxFileSize)",
			len(content), amy, len(amy.Line()), users.MaxFileSize, err)
	}
	wantFile(k, path, content+amy.Line(), "a file that amy's registration brought to exactly MaxFileSize bytes")
}
