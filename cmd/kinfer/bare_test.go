package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/host/manifest"
	"github.com/kinfer/kinfer/host/wasm"
)

// A bare module (kinfer inspect FILE.wasm [--certify]) runs under the
// limits of a plugin.toml without [limits] — fuel 2e10 per call, not
// unlimited — and inspect does not tell the user that "a study must set
// trusted = true" (there is no study or manifest). kinfer validate
// FILE.wasm points to kinfer inspect instead of a TOML error about NUL
// bytes. (Audit round 3, plugin #4: the bare module ran with fuel = 0, and
// a module whose eval loops for ever was stopped only by the 60 s wall
// clock of each of --certify's calls.)
func TestBareModuleLimits(t *testing.T) {
	src := "../../plugins/c/ligament/ligament.wasm"
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	upper := filepath.Join(dir, "LIGAMENT.WASM")
	noext := filepath.Join(dir, "ligament-module")
	for _, p := range []string{upper, noext} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := manifest.Parse("plugin.toml", "name = \"x\"\nversion = \"1\"\nkind = \"model\"\nabi = 1\nwasm = \"x.wasm\"\n")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt, err := wasm.NewRuntime(ctx, wasm.Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	for _, p := range []string{src, upper, noext} {
		pl, err := loadPlugin(ctx, rt, p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if got := pl.Manifest.Limits; got != want.Limits {
			t.Errorf("%s: limits %+v, want those of a plugin.toml without [limits] %+v", p, got, want.Limits)
		}
		pl.Close(ctx)
	}

	code, out, errs := kinfer(t, "inspect", src)
	if code != 0 {
		t.Fatalf("inspect: %d %s", code, errs)
	}
	if !strings.Contains(out, "fuel 20000000000 per call") || strings.Contains(out, "unlimited") || strings.Contains(out, "trusted") {
		t.Errorf("inspect of a bare module:\n%s", out)
	}
	for _, p := range []string{src, noext} {
		code, _, errs = kinfer(t, "validate", p)
		if code != 1 || !strings.Contains(errs, "is a WebAssembly module") || !strings.Contains(errs, "kinfer inspect "+p) || strings.Contains(errs, "NULL") {
			t.Errorf("validate %s: exit %d, %s", p, code, errs)
		}
	}
}
