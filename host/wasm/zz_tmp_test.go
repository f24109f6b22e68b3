package wasm

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/host/wasm/meter"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

func BenchmarkTmpKernel(b *testing.B) {
	const nTheta, nCond = 64, 100
	rng := rand.New(rand.NewPCG(1, 2))
	for _, path := range strings.Fields(os.Getenv("KW")) {
		bin, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		metered, err := instrument(bin)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(filepath.Base(path), func(b *testing.B) {
			ctx := context.Background()
			r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
			defer r.Close(ctx)
			wasi_snapshot_preview1.MustInstantiate(ctx, r)
			r.NewHostModuleBuilder(HostModule).NewFunctionBuilder().WithFunc(func(uint32, uint32) {}).Export("log").Instantiate(ctx)
			r.NewHostModuleBuilder(meter.ImportModule).NewFunctionBuilder().WithFunc(func(int64) int64 { return 1 << 40 }).Export(meter.ImportName).Instantiate(ctx)
			mod, err := r.InstantiateWithConfig(ctx, metered, wazero.NewModuleConfig().WithStartFunctions("_initialize"))
			if err != nil {
				b.Fatal(err)
			}
			res, err := mod.ExportedFunction("kinfer_alloc").Call(ctx, 1<<18)
			if err != nil {
				b.Fatal(err)
			}
			mem, base := mod.Memory(), uint32(res[0])
			mem.WriteFloat64Le(base, 30)
			if res, err := mod.ExportedFunction("kinfer_configure").Call(ctx, uint64(base), 1); err != nil || res[0] != 0 {
				b.Fatal(err, res)
			}
			th, x := base, base+nTheta*16
			y := x + nCond*8
			st := y + nTheta*nCond*2*8
			for i := uint32(0); i < nTheta; i++ {
				mem.WriteFloat64Le(th+16*i, 2000+10000*rng.Float64())
				mem.WriteFloat64Le(th+16*i+8, -0.5+0.9*rng.Float64())
			}
			for i := uint32(0); i < nCond; i++ {
				mem.WriteFloat64Le(x+8*i, 20+20*float64(i)/nCond)
			}
			eval := mod.ExportedFunction("kinfer_model_eval")
			stack := make([]uint64, 6)
			g, _ := mod.ExportedGlobal(meter.FuelExport).(api.MutableGlobal)
			cpuPer(b, nTheta*nCond, "ns/θ·cond", func() {
				g.Set(1 << 40)
				copy(stack, []uint64{nTheta, uint64(th), nCond, uint64(x), uint64(y), uint64(st)})
				if err := eval.CallWithStack(ctx, stack); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
