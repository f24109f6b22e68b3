package wasm

import (
	"context"
	"encoding/binary"

	"github.com/kinfer/kinfer/host/wasm/meter"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// Fuel a call of a host function (WASI, kinfer_v1) costs the guest
// (ABI.md §8): hostCallFuel for the call, one unit per byte the host
// produces or processes for it (random_get's bytes, the bytes written to
// stdout or stderr or logged: about a nanosecond of host work each, as a
// unit of fuel is of guest code) and one per 64 bytes it only copies
// (fd_read, fd_pread, poll_oneoff), as a bulk memory operation does.
// Without it a guest looping on random_get or fd_write of a large buffer
// used ~10 units an iteration for ~0.1 s of host work each, and neither
// its fuel nor the wall clock (read at refills) stopped it (audit 4,
// hostile #2).
const hostCallFuel = 1024

// hostCharge is the listener factory of the host modules: every host
// function charges its cost to the calling instance's meter before it
// runs, which also checks the wall clock and the run's stop.
type hostCharge struct{}

func (hostCharge) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	return experimental.FunctionListenerFunc(func(ctx context.Context, mod api.Module, def api.FunctionDefinition, params []uint64, _ experimental.StackIterator) {
		chargeHostCall(ctx, mod, def.Name(), params)
	})
}

// chargeHostCall takes the cost of host function name called with params
// from the guest's fuel (the metered module keeps its counter in the
// exported global around every import call). A call past the budget, the
// wall-clock limit or the run's stop traps, as a refill does.
func chargeHostCall(ctx context.Context, mod api.Module, name string, params []uint64) {
	m, _ := ctx.Value(meterKey{}).(*meterState)
	if m == nil || mod == nil {
		return
	}
	g, _ := mod.ExportedGlobal(meter.FuelExport).(api.MutableGlobal)
	if g == nil {
		return // an unmetered module (benchmarks only)
	}
	n := hostBytes(mod.Memory(), name, params)
	switch name {
	case "fd_read", "fd_pread", "poll_oneoff":
		n /= 64
	}
	cost := int64(hostCallFuel) + n
	next, err := m.refill(int64(g.Get()) - cost)
	if err != nil {
		panic(err)
	}
	g.Set(uint64(next))
}

// hostBytes is the number of bytes host function name moves for the
// guest: random_get's length, the iovec lengths of fd_read, fd_write,
// fd_pread and fd_pwrite, poll_oneoff's subscriptions, log's span.
func hostBytes(mem api.Memory, name string, params []uint64) int64 {
	switch name {
	case "random_get", "log":
		if len(params) >= 2 {
			return int64(uint32(params[1]))
		}
	case "poll_oneoff":
		if len(params) >= 3 {
			return 48 * int64(uint32(params[2]))
		}
	case "fd_read", "fd_write", "fd_pread", "fd_pwrite":
		if len(params) < 3 || mem == nil {
			return 0
		}
		iovs, n := uint32(params[1]), uint32(params[2])
		// The iovec array must lie in memory (the call fails
		// otherwise); reading it costs the host no more than the call.
		b, ok := mem.Read(iovs, n*8)
		if !ok || uint64(n)*8 > uint64(mem.Size()) {
			return 8 * int64(n)
		}
		total := 8 * int64(n)
		for i := uint32(0); i < n; i++ {
			total += int64(binary.LittleEndian.Uint32(b[8*i+4:]))
		}
		return total
	}
	return 0
}
