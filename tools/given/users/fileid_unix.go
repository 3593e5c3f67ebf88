//go:build unix

package users

import (
	"os"
	"syscall"
)

// idOf is the file's device and inode: a users.txt replaced by another file
// (a rename over it) has another id, and is read again from its start.
func idOf(st os.FileInfo) fileID {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return fileID{uint64(s.Dev), uint64(s.Ino)}
	}
	return fileID{}
}
