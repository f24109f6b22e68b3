//go:build !amd64 || purego

package softplus

// Kernel is "portable": no assembly kernel here.
const Kernel = "portable"

func vectorSoftplus(dst, z []float64) int { return 0 }
func vectorSigmoid(dst, z []float64) int  { return 0 }
