package target_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeArmRows copies the header and the first n rows of
// examples/arm/train.csv to dir/train.csv, for small arm studies.
func writeArmRows(t testing.TB, dir string, n int) {
	t.Helper()
	in, err := os.Open("../../examples/arm/train.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var b strings.Builder
	sc := bufio.NewScanner(in)
	for i := 0; i <= n && sc.Scan(); i++ {
		b.WriteString(sc.Text() + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "train.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
