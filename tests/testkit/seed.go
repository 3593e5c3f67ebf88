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

// Rand returns a random source for this check's generated inputs: cases
// drawn afresh on every run, so that answers cannot be memorised, and checked
// against the course's given reference code (tools/), never against a
// solution. The seed comes from $SERVERLAB_SEED or the clock, once per check:
// every source the check asks for derives from it (the n-th call gets the
// n-th stream), so that one seed replays the whole check and a failure names
// it once, however many sources the check drew.
func (k *T) Rand() *rand.Rand {
	k.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.seeded {
		k.seed, k.seeded = uint64(time.Now().UnixNano()), true
		if s := os.Getenv(SeedEnv); s != "" {
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				k.T.Fatalf("%s=%q is not a number\n%s", SeedEnv, s, k.Where())
			}
			k.seed = v
		}
		seed := k.seed
		k.Cleanup(func() {
			if k.Failed() {
				k.Logf("random inputs from seed %d: rerun with %s=%d go test -fullpath -run '%s' ...",
					seed, SeedEnv, seed, k.Name())
			}
		})
	}
	k.streams++
	return rand.New(rand.NewPCG(k.seed, k.seed^0x9e3779b97f4a7c15+k.streams-1))
}
