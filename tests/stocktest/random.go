package stocktest

import (
	"math/rand/v2"
	"strconv"
	"strings"

	"serverlab/tests/testkit"
	"serverlab/tools/given/stockproto"
)

// checkRandomRequests sends request lines drawn afresh on every run (k.Rand):
// good and bad commands, numbers at and past the limits, odd blanks. What each
// must get comes from the given parser (stockproto.Parse) and the suite's
// model of the market, never from a solution, so the answers cannot be
// memorised. They go in batches of one write each: pipelined as a client may.
func checkRandomRequests(k *testkit.T, c *testkit.Conn, m *model) {
	k.Helper()
	rng := k.Rand()
	for range 20 {
		var batch []string
		for range 1 + rng.IntN(10) {
			batch = append(batch, randomRequest(rng))
		}
		c.Write([]byte(strings.Join(batch, "\n")+"\n"), strconvQuote(batch))
		for _, line := range batch {
			want := reply(m, strings.TrimSuffix(line, "\r"))
			got, err := readRecord(c)
			if err != nil {
				k.Fatalf("want the reply %q to %q: %v%s", want, line, err, c.Context())
			}
			if got != want {
				k.Fatalf("wrong reply to the generated request %q\n  want: %q\n   got: %q%s", line, want, got, c.Context())
			}
		}
	}
}

func strconvQuote(lines []string) string {
	q := make([]string, len(lines))
	for i, l := range lines {
		q[i] = strconv.Quote(l + "\n")
	}
	return strings.Join(q, " ") + " (in one write)"
}

// randomRequest is one request line (without its '\n'), good or bad.
func randomRequest(rng *rand.Rand) string {
	words := []string{"show", "buy", "sell", "exitt", "sho", "Buy", ""}
	cmd := words[rng.IntN(len(words))]
	if cmd == "show" || cmd == "" {
		if rng.IntN(4) == 0 {
			return blanks(rng) + cmd + blanks(rng) + randomNumber(rng)
		}
		return blanks(rng) + cmd + blanks(rng)
	}
	fields := []string{cmd}
	for range rng.IntN(4) {
		fields = append(fields, randomNumber(rng))
	}
	line := fields[0]
	for _, f := range fields[1:] {
		line += sep(rng) + f
	}
	if rng.IntN(5) == 0 {
		line += "\r"
	}
	return line
}

// randomNumber is an ID or a count: mostly a stock of the market or a small
// count, sometimes one at or past the limits, or not a number at all.
func randomNumber(rng *rand.Rand) string {
	switch rng.IntN(10) {
	case 0:
		return strconv.Itoa(stockproto.MaxArg - rng.IntN(3))
	case 1:
		return strconv.Itoa(stockproto.MaxArg + 1 + rng.IntN(1000))
	case 2:
		return []string{"-1", "+2", "0", "1x", "0x10", "007", "1.0"}[rng.IntN(7)]
	case 3:
		return strconv.Itoa(rng.IntN(12)) // an ID that may not exist
	default:
		return strconv.Itoa([]int{5, 3, 8, 1, 4, 9}[rng.IntN(6)])
	}
}

func sep(rng *rand.Rand) string { return []string{" ", "  ", "\t", " \t "}[rng.IntN(4)] }

func blanks(rng *rand.Rand) string { return []string{"", "", " ", "\t"}[rng.IntN(4)] }
