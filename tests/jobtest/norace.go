//go:build !race

package jobtest

const raceEnabled = false
