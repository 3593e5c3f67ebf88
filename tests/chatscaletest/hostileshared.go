package chatscaletest

import (
	"fmt"

	"serverlab/tests/chatcoretest/hostile"
	"serverlab/tests/testkit"
)

// hostileStartShared serves n servers of impl on one fresh NATS, each with
// the limits hostileStart would give one: the hostile checks whose limit
// chapter 08's servers keep together (hostile.ChannelCapRace).
func hostileStartShared(impl Impl) hostile.StartShared {
	return func(k *testkit.T, l hostile.Limits, n int) []string {
		k.Helper()
		url := startNATS(k).url()
		addrs := make([]string, n)
		for i := range addrs {
			cfg := baseConfig(k, url)
			hostileLimits(&cfg, l)
			addrs[i] = serve(k, impl, fmt.Sprintf("H%d", i+1), cfg).srv.Addr
		}
		return addrs
	}
}
