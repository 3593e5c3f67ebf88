package jobs

import (
	"math"
	"testing"
)

func TestResultStrings(t *testing.T) {
	tests := []struct {
		name      string
		got, want string
	}{
		{"prime", PrimeResult(true), "prime"},
		{"composite", PrimeResult(false), "composite"},
		{"append prime", string(AppendPrimeResult([]byte("OK 1 "), true)), "OK 1 prime"},
		{"sort", SortResult(10000, -90494), "sorted 10000 checksum -90494"},
		{"sort min int32", SortResult(2, math.MinInt32), "sorted 2 checksum -2147483648"},
		{"sort positive", SortResult(3, 12345), "sorted 3 checksum 12345"},
		{"append sort", string(AppendSortResult([]byte("OK 7 "), 1, 0)), "OK 7 sorted 1 checksum 0"},
		{"matmul", MatMulResult(64, 192), "matmul 64 checksum 192.000000"},
		{"matmul 512", MatMulResult(512, 1536), "matmul 512 checksum 1536.000000"},
		// What glibc's printf("%f") prints for these values. 0.0078125 = 2^-7
		// and 0.0234375 = 3×2^-7 are exact ties at the seventh decimal: round
		// half to even.
		{"matmul rounding", MatMulResult(1, 0.1234565), "matmul 1 checksum 0.123456"},
		{"matmul tie down", MatMulResult(1, 0.0078125), "matmul 1 checksum 0.007812"},
		{"matmul tie up", MatMulResult(1, 0.0234375), "matmul 1 checksum 0.023438"},
		{"matmul small", MatMulResult(1, 1e-7), "matmul 1 checksum 0.000000"},
		{"matmul large", MatMulResult(1, 1e20), "matmul 1 checksum 100000000000000000000.000000"},
		{"append matmul", string(AppendMatMulResult([]byte("OK 2 "), 3, 9)), "OK 2 matmul 3 checksum 9.000000"},
		{"hash", HashResult(5577293430985752569), "5577293430985752569"},
		{"hash above int64", HashResult(13417157620362267345), "13417157620362267345"},
		{"append hash", string(AppendHashResult([]byte("OK 3 "), math.MaxUint64)), "OK 3 18446744073709551615"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}
