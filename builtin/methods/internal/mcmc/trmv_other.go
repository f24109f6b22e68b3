//go:build !amd64 || purego

package mcmc

// hasFMA is false: no assembly kernel here.
const hasFMA = false

// trmvLower is the random walk's L·z product (see trmvLowerGo).
func trmvLower(y, x, l, z []float64, d, ds int, scale float64) {
	trmvLowerGo(y, x, l, z, d, ds, scale)
}
