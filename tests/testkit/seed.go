package testkit

import (
	"math/rand/v2"
	"os"
	"strconv"
	"time"
)

// SeedEnv names the environment variable that fixes the seed of every check's
// random inputs, so that a failure can be replayed exactly.
const SeedEnv = "SERVERLAB_SEED"

// Rand returns the random source for this check's generated inputs: cases
// drawn afresh on every run, so that answers cannot be memorised, and checked
// against the course's given reference code (tools/), never against a
// solution. The seed comes from $SERVERLAB_SEED or the clock; if the check
// fails, its failure says how to rerun it with the same inputs.
func (k *T) Rand() *rand.Rand {
	k.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(SeedEnv); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			k.Fatalf("%s=%q is not a number", SeedEnv, s)
		}
		seed = v
	}
	k.Cleanup(func() {
		if k.Failed() {
			k.Logf("random inputs from seed %d: rerun with %s=%d go test -fullpath -run '%s' ...",
				seed, SeedEnv, seed, k.Name())
		}
	})
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}
