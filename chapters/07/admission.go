package chatcore

import "serverlab/tools/given/chatcore/guard"

// registrationLimiter counts registrations per client address, with the
// failed-login limiter's token bucket (guard.Failures): AddressRegistrations at once,
// refilled evenly over RegistrationWindow. It is what tells a burst of
// honest clients from a flood of registrations when both come from one
// address (a NAT, a load tester on 127.0.0.1, an attacker): an honest burst
// is one registration per client, and an address has at most
// MaxConnsPerAddress clients at once, so the default budget is that many
// (the original's load tester registers 451 users at 450 clients: all fit);
// a flood goes on, and once the budget is spent each registration costs the
// address a seven-second share of the window, without a hash. With the
// defaults a flood from one address costs the server one burst of hashes,
// then one hash every 7 s.
type registrationLimiter struct{ buckets *guard.Failures }

// allowed reports whether addr may register a user now.
func (r registrationLimiter) allowed(addr string) bool { return r.buckets.Allowed(addr) }

// count takes one registration from addr's budget.
func (r registrationLimiter) count(addr string) { r.buckets.Failed(addr) }
