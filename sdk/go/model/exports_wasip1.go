//go:build wasip1

package model

import (
	"unsafe"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/sdk/go/guest"
)

// Model exports, ABI.md §6.1. Buffers are viewed in place.

//go:wasmexport kinfer_model_eval
func kinferModelEval(b int32, theta unsafe.Pointer, K int32, x, y, status unsafe.Pointer) int32 {
	s, rc := ready(b, K)
	if s == nil {
		return rc
	}
	nb, nk := int(b), int(K)
	s.evalBatch(nb, nk, guest.F64s(theta, nb*s.d), guest.F64s(x, nk*s.c),
		guest.F64s(y, nb*nk*s.m), guest.Statuses(status, nb))
	return 0
}

//go:wasmexport kinfer_model_jacobian
func kinferModelJacobian(theta unsafe.Pointer, K int32, x, y, jac unsafe.Pointer) int32 {
	s, rc := ready(K)
	if s == nil {
		return rc
	}
	nk := int(K)
	return int32(s.jacobian(guest.F64s(theta, s.d), guest.F64s(x, nk*s.c),
		guest.F64s(y, nk*s.m), guest.F64s(jac, nk*s.m*s.d)))
}

//go:wasmexport kinfer_model_vjp
func kinferModelVJP(theta unsafe.Pointer, K int32, x, v, y, g unsafe.Pointer) int32 {
	s, rc := ready(K)
	if s == nil {
		return rc
	}
	nk := int(K)
	return int32(s.vjpOne(guest.F64s(theta, s.d), guest.F64s(x, nk*s.c), guest.F64s(v, nk*s.m),
		guest.F64s(y, nk*s.m), guest.F64s(g, s.d)))
}

//go:wasmexport kinfer_model_forward
func kinferModelForward(theta unsafe.Pointer, K int32, x, y, tape unsafe.Pointer) int32 {
	s, rc := ready(K)
	if s == nil {
		return rc
	}
	nk := int(K)
	st, t := s.forward(guest.F64s(theta, s.d), guest.F64s(x, nk*s.c), guest.F64s(y, nk*s.m))
	if st == abi.OK {
		var span int64
		if len(t) > 0 {
			span = guest.Span(unsafe.Pointer(&t[0]), len(t))
		}
		*(*int64)(tape) = span
	}
	return int32(st)
}

//go:wasmexport kinfer_model_pullback
func kinferModelPullback(theta unsafe.Pointer, K int32, x, tape unsafe.Pointer, n int32, v, g unsafe.Pointer) int32 {
	s, rc := ready(K, n)
	if s == nil {
		return rc
	}
	nk := int(K)
	return int32(s.pullback(guest.F64s(theta, s.d), guest.F64s(x, nk*s.c), guest.F64s(tape, int(n)),
		guest.F64s(v, nk*s.m), guest.F64s(g, s.d)))
}
