package wasm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
)

// cacheEntry loads the quad model through a runtime with the disk cache in
// dir and returns the one entry file wazero wrote, with its bytes.
func cacheEntry(t *testing.T, dir string) (string, []byte) {
	t.Helper()
	r, err := NewRuntime(context.Background(), Options{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Load(context.Background(), testManifest("quad", "model.wasm", abi.KindModel, 0, 0)); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(r.cacheDir); err != nil || !st.IsDir() {
		t.Fatalf("cacheEntriesDir %s is not where wazero keeps its entries (%v); ls %s: %v", r.cacheDir, err, dir, ls(dir))
	}
	ents, _ := os.ReadDir(r.cacheDir)
	if len(ents) != 1 {
		t.Fatalf("%s holds %v, want one entry", r.cacheDir, ls(r.cacheDir))
	}
	p := filepath.Join(r.cacheDir, ents[0].Name())
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, b
}

func ls(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// A damaged compilation-cache entry (emptied, truncated, a byte changed:
// a full disk, a crash, a copied cache) is deleted and the module compiled
// again, so the load succeeds and the cache is good again. Before the fix
// every load of the plugin failed for good with wazero's message
// ("compilationcache: error reading header: EOF", "checksum mismatch";
// audit round 3, hostile #12).
func TestDamagedCacheEntry(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"emptied", func([]byte) []byte { return nil }},
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
		{"a byte changed", func(b []byte) []byte {
			b = append([]byte(nil), b...)
			b[len(b)/2] ^= 0xff
			return b
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			entry, good := cacheEntry(t, dir)
			if err := os.WriteFile(entry, c.damage(good), 0o644); err != nil {
				t.Fatal(err)
			}
			// Another kinfer's entry being written is left alone.
			partial := entry + ".123.tmp"
			if err := os.WriteFile(partial, []byte("partial"), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := NewRuntime(context.Background(), Options{CacheDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close(context.Background())
			p, err := r.Load(context.Background(), testManifest("quad", "model.wasm", abi.KindModel, 0, 0))
			if err != nil {
				t.Fatalf("load with a damaged cache entry: %v", err)
			}
			m, err := p.Model(context.Background(), []float64{2}, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer m.(interface{ Close() error }).Close()
			y := make([]float64, 2)
			if st := m.Eval([]float64{1, 0}, []float64{3}, y); st != abi.OK {
				t.Errorf("eval after the recompilation: status %v", st)
			}
			if b, err := os.ReadFile(entry); err != nil || len(b) != len(good) {
				t.Errorf("the cache entry was not written again: %d bytes, %v; want %d", len(b), err, len(good))
			}
			if _, err := os.Stat(partial); err != nil {
				t.Errorf("another writer's partial entry was deleted: %v", err)
			}
		})
	}
}

// When the damaged entry cannot be deleted (here: it is a folder with a
// file in it, which os.Remove refuses even to root), the error names the
// cache folder and KINFER_CACHE_DIR=-.
func TestDamagedCacheEntryNotRemovable(t *testing.T) {
	dir := t.TempDir()
	entry, _ := cacheEntry(t, dir)
	if err := os.Remove(entry); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(entry, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := NewRuntime(context.Background(), Options{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background())
	_, err = r.Load(context.Background(), testManifest("quad", "model.wasm", abi.KindModel, 0, 0))
	wantErr(t, err, "compilationcache:", "could not be cleared", r.cacheDir, "KINFER_CACHE_DIR=-")
	if !strings.HasPrefix(r.cacheDir, dir) {
		t.Errorf("cache folder %s is not below %s", r.cacheDir, dir)
	}
}
