package jobs

import "strconv"

// The result strings of the protocol, the text after "OK <id> ". Each comes as
// an Append function, which writes into the caller's buffer without allocating
// (a server builds its reply line in a reused []byte), and as a string
// function for tests and tools.

// AppendPrimeResult appends "prime" or "composite".
func AppendPrimeResult(dst []byte, isPrime bool) []byte {
	return append(dst, PrimeResult(isPrime)...)
}

// PrimeResult returns "prime" or "composite".
func PrimeResult(isPrime bool) string {
	if isPrime {
		return "prime"
	}
	return "composite"
}

// AppendSortResult appends "sorted <n> checksum <checksum>", the checksum in
// signed decimal.
func AppendSortResult(dst []byte, n int, checksum int32) []byte {
	dst = append(dst, "sorted "...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	dst = append(dst, " checksum "...)
	return strconv.AppendInt(dst, int64(checksum), 10)
}

// SortResult returns "sorted <n> checksum <checksum>".
func SortResult(n int, checksum int32) string {
	return string(AppendSortResult(nil, n, checksum))
}

// AppendMatMulResult appends "matmul <n> checksum <checksum>", the checksum
// formatted like C's printf("%f"): fixed-point with six decimals, correctly
// rounded (192 → "192.000000").
func AppendMatMulResult(dst []byte, n int, checksum float64) []byte {
	dst = append(dst, "matmul "...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	dst = append(dst, " checksum "...)
	return strconv.AppendFloat(dst, checksum, 'f', 6, 64)
}

// MatMulResult returns "matmul <n> checksum <checksum>".
func MatMulResult(n int, checksum float64) string {
	return string(AppendMatMulResult(nil, n, checksum))
}

// AppendHashResult appends the hash in unsigned decimal.
func AppendHashResult(dst []byte, h uint64) []byte {
	return strconv.AppendUint(dst, h, 10)
}

// HashResult returns the hash in unsigned decimal.
func HashResult(h uint64) string {
	return strconv.FormatUint(h, 10)
}
