//go:build !amd64 || purego

package dgemm

// available: no assembly kernels here.
var available = []*kernels{portable}

var best = portable
