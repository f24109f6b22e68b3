package meter

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tetratelabs/wazero"
)

// FuzzInstrument: any bytes are instrumented or refused without a panic,
// and a module wazero accepts (compiles and validates) is still accepted
// after instrumentation: the rewrite never breaks a valid module.
func FuzzInstrument(f *testing.F) {
	for _, glob := range []string{"../testdata/*.wasm", "../../testdata/plugins/*/*.wasm", "../../../plugins/c/*/*.wasm"} {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add(countLoop())
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	f.Fuzz(func(t *testing.T, bin []byte) {
		out, err := Instrument(bin)
		if err != nil {
			// Refusing is allowed (unsupported features, limits). The
			// original is not compiled then: what the meter refuses
			// includes what would exhaust wazero (billions of locals).
			return
		}
		orig, origErr := rt.CompileModule(ctx, bin)
		if origErr == nil {
			orig.Close(ctx)
		}
		inst, instErr := rt.CompileModule(ctx, out)
		if instErr == nil {
			inst.Close(ctx)
		}
		if origErr == nil && instErr != nil {
			t.Fatalf("the original compiles, the instrumented module does not: %v", instErr)
		}
	})
}
