package kinfer

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The carried SDK is complete and self-contained: every Go file under abi/
// and sdk/go/ on disk is in SDK (a package added deeper than the embed
// pattern reaches would be missing from plugins built outside the
// repository), and the embedded files import only the standard library
// and the embedded packages (the go.mod written for them requires
// nothing).
func TestSDKIsCompleteAndStdlibOnly(t *testing.T) {
	var onDisk, embedded []string
	for _, root := range []string{"abi", "sdk/go"} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") {
				onDisk = append(onDisk, filepath.ToSlash(p))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	pkgs := map[string]bool{}
	err := fs.WalkDir(SDK, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") {
			embedded = append(embedded, p)
			pkgs["github.com/kinfer/kinfer/"+filepath.ToSlash(filepath.Dir(p))] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(onDisk)
	if !slices.Equal(onDisk, embedded) {
		t.Fatalf("abi/ and sdk/go/ hold %v but SDK embeds %v: update the go:embed patterns in sdk.go", onDisk, embedded)
	}
	for _, p := range embedded {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		src, _ := fs.ReadFile(SDK, p)
		f, err := parser.ParseFile(token.NewFileSet(), p, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(strings.SplitN(path, "/", 2)[0], ".") && !pkgs[path] {
				t.Errorf("%s imports %s, which is neither the standard library nor a carried SDK package", p, path)
			}
		}
	}
	h, err := fs.ReadFile(SDK, "sdk/c/kinfer.h")
	if disk, _ := os.ReadFile("sdk/c/kinfer.h"); err != nil || string(h) != string(disk) {
		t.Errorf("the carried kinfer.h differs from sdk/c/kinfer.h: %v", err)
	}
}

// The Rust crate and the AssemblyScript package are carried whole: every
// file of sdk/rust and sdk/assemblyscript on disk is in SDK with the same
// bytes (a file added there but not to the embed patterns would be missing
// from plugins built outside the repository).
func TestSDKCarriesRustAndAssemblyScript(t *testing.T) {
	n := 0
	for _, root := range []string{"sdk/rust", "sdk/assemblyscript"} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			disk, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			emb, err := fs.ReadFile(SDK, filepath.ToSlash(p))
			if err != nil {
				t.Errorf("%s is not embedded: %v", p, err)
				return nil
			}
			if string(emb) != string(disk) {
				t.Errorf("%s: embedded copy differs", p)
			}
			n++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < 6 {
		t.Fatalf("found %d files under sdk/rust and sdk/assemblyscript, want at least 6", n)
	}
}
