package guard

import "time"

// Presence is one connection's budget of presence events (126 login, 125
// logout, 128 join, 127 leave): a token bucket of burst events, refilled at
// rate a second. A login goes to every open connection and a join to every
// member of a channel, so N clients logging in and out, or hopping between
// channels, make N frames per request and N² in all: unbounded, such a storm
// moved 260–569 MB of events in 15 s on chapter 07, and 233–352 MB to 200
// observers on two chapter 08 servers (whose events also cross NATS to
// every other server). An event that finds its receiver's bucket empty is
// not sent to that receiver; the connection stays.
//
// Both chapters use it where they hand an event to a connection, under the
// lock that guards the connection's state: a Presence is not safe for
// concurrent use. Its zero value is a full bucket.
type Presence struct {
	tokens  float64
	at      time.Time // when tokens was last brought up to date; zero: never
	dropped int       // events not sent for want of tokens
}

// Take spends one event of the budget, if there is one at now, and reports
// whether the event may be sent.
func (p *Presence) Take(now time.Time, rate, burst int) bool {
	if p.at.IsZero() {
		p.tokens = float64(burst)
	} else {
		p.tokens = min(float64(burst), p.tokens+now.Sub(p.at).Seconds()*float64(rate))
	}
	p.at = now
	if p.tokens < 1 {
		p.dropped++
		return false
	}
	p.tokens--
	return true
}

// Dropped is how many events Take has refused: 1 right after the first
// (the moment to log it, once per connection).
func (p *Presence) Dropped() int { return p.dropped }
