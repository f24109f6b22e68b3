//go:build !amd64 || purego

package nn

func adamVector(p, g, m, v []float64, c *[8]float64) int { return 0 }
