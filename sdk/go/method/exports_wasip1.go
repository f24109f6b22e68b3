//go:build wasip1

package method

import (
	"fmt"
	"unsafe"

	"github.com/kinfer/kinfer/sdk/go/guest"
)

// Method exports, ABI.md §6.3.

// header is the 16-byte batch header kinfer_method_ask returns; a package
// variable, so it stays valid until the next call.
var header [4]uint32

//go:wasmexport kinfer_method_init
func kinferMethodInit(d int32, seed int64, lower, upper unsafe.Pointer) int32 {
	err := call("init", false, func(s *server) error {
		if d <= 0 {
			return fmt.Errorf("init with d = %d", d)
		}
		n := int(d)
		return s.init(n, uint64(seed), guest.F64s(lower, n), guest.F64s(upper, n))
	})
	if err != nil {
		return guest.Fail(err)
	}
	return 0
}

//go:wasmexport kinfer_method_ask
func kinferMethodAsk() unsafe.Pointer {
	err := call("ask", true, func(s *server) error {
		n, mode, want, err := s.ask()
		if err != nil {
			return err
		}
		var pts uint32
		if mode == 0 {
			pts = guest.Ptr32(unsafe.Pointer(&s.points[0]))
		}
		header = [4]uint32{uint32(n), uint32(mode), want, pts}
		return nil
	})
	if err != nil {
		guest.Fail(err)
		return nil
	}
	return unsafe.Pointer(&header[0])
}

//go:wasmexport kinfer_method_tell
func kinferMethodTell(n int32, theta, status, logPrior, logLik, grad unsafe.Pointer) int32 {
	err := call("tell", true, func(s *server) error {
		if n < 0 {
			return fmt.Errorf("tell with n = %d", n)
		}
		k := int(n)
		var g []float64
		if grad != nil {
			g = guest.F64s(grad, k*s.d)
		}
		return s.tell(k, guest.F64s(theta, k*s.d), guest.Statuses(status, k),
			guest.F64s(logPrior, k), guest.F64s(logLik, k), g)
	})
	if err != nil {
		return guest.Fail(err)
	}
	return 0
}

//go:wasmexport kinfer_method_problem
func kinferMethodProblem(d, r int32, defaults unsafe.Pointer, nStarts int32, starts, names unsafe.Pointer, namesLen int32) int32 {
	err := call("problem", false, func(s *server) error {
		if d <= 0 || r <= 0 || nStarts <= 0 || namesLen < 0 {
			return fmt.Errorf("problem with d = %d, R = %d, %d starts, %d name bytes", d, r, nStarts, namesLen)
		}
		return s.problem(int(d), int(r), guest.F64s(defaults, int(d)), guest.F64s(starts, int(nStarts)*int(d)), guest.Bytes(names, int(namesLen)))
	})
	if err != nil {
		return guest.Fail(err)
	}
	return 0
}

//go:wasmexport kinfer_method_tell_lsq
func kinferMethodTellLSQ(n int32, theta, status, logPrior, logLik, grad unsafe.Pointer, r int32, res, jac unsafe.Pointer) int32 {
	err := call("tell_lsq", true, func(s *server) error {
		if n < 0 || int(r) != s.r {
			return fmt.Errorf("tell_lsq with n = %d, R = %d (the problem's R is %d)", n, r, s.r)
		}
		k := int(n)
		var g, rr, jj []float64
		if grad != nil {
			g = guest.F64s(grad, k*s.d)
		}
		if res != nil {
			rr = guest.F64s(res, k*s.r)
		}
		if jac != nil {
			jj = guest.F64s(jac, k*s.r*s.d)
		}
		return s.tellLSQ(k, guest.F64s(theta, k*s.d), guest.Statuses(status, k),
			guest.F64s(logPrior, k), guest.F64s(logLik, k), g, rr, jj)
	})
	if err != nil {
		return guest.Fail(err)
	}
	return 0
}

//go:wasmexport kinfer_method_outputs
func kinferMethodOutputs(m, rows, likelihoods int32, names unsafe.Pointer, namesLen int32) int32 {
	err := call("outputs", false, func(s *server) error {
		if m <= 0 || rows <= 0 || likelihoods < 0 || namesLen < 0 {
			return fmt.Errorf("outputs with m = %d, %d rows, %d likelihoods, %d name bytes", m, rows, likelihoods, namesLen)
		}
		return s.outputs(int(m), int(rows), int(likelihoods), guest.Bytes(names, int(namesLen)))
	})
	if err != nil {
		return guest.Fail(err)
	}
	return 0
}

//go:wasmexport kinfer_method_tell_outputs
func kinferMethodTellOutputs(n int32, theta, status, logPrior, logLik, grad unsafe.Pointer, o int32, y unsafe.Pointer) int32 {
	err := call("tell_outputs", true, func(s *server) error {
		if n < 0 || int(o) != s.o {
			return fmt.Errorf("tell_outputs with n = %d, %d outputs per point (the problem's are %d)", n, o, s.o)
		}
		k := int(n)
		var g []float64
		if grad != nil {
			g = guest.F64s(grad, k*s.d)
		}
		return s.tellOutputs(k, guest.F64s(theta, k*s.d), guest.Statuses(status, k),
			guest.F64s(logPrior, k), guest.F64s(logLik, k), g, guest.F64s(y, k*s.o))
	})
	if err != nil {
		return guest.Fail(err)
	}
	return 0
}

//go:wasmexport kinfer_method_done
func kinferMethodDone() int32 {
	done := false
	err := call("done", true, func(s *server) error { done = s.mth.Done(); return nil })
	if err != nil {
		guest.Fail(err)
		return 0
	}
	if done {
		return 1
	}
	return 0
}

//go:wasmexport kinfer_method_samples
func kinferMethodSamples() int64 {
	var span int64
	err := call("samples", true, func(s *server) error {
		if err := s.report(); err != nil {
			return err
		}
		if len(s.samples) > 0 {
			span = guest.Span(unsafe.Pointer(&s.samples[0]), len(s.samples)/(s.d+2))
		}
		return nil
	})
	if err != nil {
		guest.Fail(err)
		return 0
	}
	return span
}

//go:wasmexport kinfer_method_report
func kinferMethodReport() int64 {
	var span int64
	err := call("report", true, func(s *server) error {
		if err := s.report(); err != nil {
			return err
		}
		span = guest.SpanBytes(s.extra)
		return nil
	})
	if err != nil {
		guest.Fail(err)
		return 0
	}
	return span
}

//go:wasmexport kinfer_method_save
func kinferMethodSave() int64 {
	var span int64
	err := call("save", true, func(s *server) error {
		if err := s.save(); err != nil {
			return err
		}
		span = guest.SpanBytes(s.saved)
		return nil
	})
	if err != nil {
		guest.Fail(err)
		return 0
	}
	return span
}

//go:wasmexport kinfer_method_load
func kinferMethodLoad(p unsafe.Pointer, nbytes int32) int32 {
	err := call("load", true, func(s *server) error {
		if nbytes < 0 {
			return fmt.Errorf("load with %d bytes", nbytes)
		}
		return s.load(guest.Bytes(p, int(nbytes)))
	})
	if err != nil {
		return guest.Fail(err)
	}
	return 0
}
