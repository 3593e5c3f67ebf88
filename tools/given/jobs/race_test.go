//go:build race

package jobs

// raceEnabled is true under go test -race, where sync.Pool drops items on
// purpose and every memory access is instrumented.
const raceEnabled = true
