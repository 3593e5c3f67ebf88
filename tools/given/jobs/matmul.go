package jobs

// matMul sets c = a×b for n×n row-major matrices; c must be zeroed.
//
// It is the naive O(n³) algorithm — every product a[i][k]×b[k][j] is computed
// and added — arranged for the memory system:
//
//   - i-k-j order: the inner loop walks a row of b and a row of c with stride 1
//     instead of striding down a column of b (the textbook i-j-k order), and
//     its iterations are independent instead of one long chain of additions.
//   - k in steps of four: the inner loop adds four rows of b into c[i][j] while
//     it sits in a register, so c is loaded and stored once per four products
//     instead of once per product. Each c[i][j] still receives its products in
//     k order, so the result is bit-for-bit that of the plain loop.
//   - hoisted row slices of equal length: the compiler proves every index of
//     the inner loops in range and emits no bounds checks (verify with
//     go build -gcflags=-d=ssa/check_bce ./tools/given/jobs/).
//
// Measured here for MATMUL 32, filling included: plain i-k-j ~11 µs, i-k-j with
// j unrolled by four ~16 µs (worse), this ~8 µs; g++ -O2 ~11 µs in either
// order.
func matMul(c, a, b []float64, n int) {
	for i := range n {
		ci := c[i*n : i*n+n]
		ai := a[i*n : i*n+n]
		k := 0
		for ; k+4 <= n; k += 4 {
			addRows4(ci, ai[k:k+4], b[k*n:(k+4)*n])
		}
		for ; k < n; k++ {
			addRow(ci, ai[k], b[k*n:k*n+n])
		}
	}
}

// addRows4 adds coef[r] × row r of b4 to c for r = 0..3, where b4 holds four
// rows of len(c) elements.
func addRows4(c, coef, b4 []float64) {
	n := len(c)
	a0, a1, a2, a3 := coef[0], coef[1], coef[2], coef[3]
	b0 := b4[0*n : 1*n][:n]
	b1 := b4[1*n : 2*n][:n]
	b2 := b4[2*n : 3*n][:n]
	b3 := b4[3*n : 4*n][:n]
	for j := range c {
		s := c[j]
		s += a0 * b0[j]
		s += a1 * b1[j]
		s += a2 * b2[j]
		s += a3 * b3[j]
		c[j] = s
	}
}

// addRow adds alpha × row to c (len(row) == len(c)).
func addRow(c []float64, alpha float64, row []float64) {
	row = row[:len(c)]
	for j := range c {
		c[j] += alpha * row[j]
	}
}
