//go:build !unix

package chatcore

import "os"

// lockDB opens the database file without a lock where flock does not exist:
// there, run one server per database.
func lockDB(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}
