//go:build race

package jobtest

// raceEnabled: the race detector slows MATMUL 512 down to seconds, so the
// server check leaves it out under -race (tools/given/jobs checks the value).
const raceEnabled = true
