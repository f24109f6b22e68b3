//go:build wasip1

package likelihood

import (
	"unsafe"

	"github.com/kinfer/kinfer/sdk/go/guest"
)

// Likelihood exports, ABI.md §6.2. Buffers are viewed in place.

//go:wasmexport kinfer_likelihood_eval
func kinferLikelihoodEval(K, m int32, y, obs, sigma, out unsafe.Pointer) int32 {
	s, rc := ready(K, m)
	if s == nil {
		return rc
	}
	n := int(K) * int(m)
	return int32(s.eval(int(m), guest.F64s(y, n), guest.F64s(obs, n), guest.F64s(sigma, n), guest.F64s(out, 1)))
}

//go:wasmexport kinfer_likelihood_grad
func kinferLikelihoodGrad(K, m int32, y, obs, sigma, out, gy unsafe.Pointer) int32 {
	s, rc := ready(K, m)
	if s == nil {
		return rc
	}
	n := int(K) * int(m)
	return int32(s.gradY(int(m), guest.F64s(y, n), guest.F64s(obs, n), guest.F64s(sigma, n), guest.F64s(out, 1), guest.F64s(gy, n)))
}

//go:wasmexport kinfer_likelihood_residuals
func kinferLikelihoodResiduals(K, m int32, y, obs, sigma, r unsafe.Pointer) int32 {
	s, rc := ready(K, m)
	if s == nil {
		return rc
	}
	n := int(K) * int(m)
	return int32(s.residuals(int(m), guest.F64s(y, n), guest.F64s(obs, n), guest.F64s(sigma, n), guest.F64s(r, n)))
}

//go:wasmexport kinfer_likelihood_eval_batch
func kinferLikelihoodEvalBatch(b, K, m int32, y, obs, sigma, out, status unsafe.Pointer) int32 {
	s, rc := ready(K, m)
	if s == nil {
		return rc
	}
	if b < 0 {
		return guest.Failf("%s: batch of %d points", s.spec.Name, b)
	}
	n := int(K) * int(m)
	s.evalBatch(int(m), int(b), n, guest.F64s(y, int(b)*n), guest.F64s(obs, n), guest.F64s(sigma, n), guest.F64s(out, int(b)), guest.Statuses(status, int(b)))
	return 0
}
