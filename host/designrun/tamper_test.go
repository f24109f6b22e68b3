//go:build unix

package designrun

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTamperedResume: --resume on a directory whose files were changed
// or replaced fails with an error naming the file, without a panic, a
// hang, unbounded memory or writing outside the directory. Each case
// damages a copy of a run stopped after its first chunk.
func TestTamperedResume(t *testing.T) {
	s := load(t, 1)
	part := t.TempDir()
	o := Options{Kind: "sobol", N: 300, Workers: 1, Stop: func(int) bool { return true }}
	if _, err := Run(context.Background(), s, part, o); err != nil {
		t.Fatal(err)
	}
	record, _ := os.ReadFile(filepath.Join(part, "design.json"))
	csv, _ := os.ReadFile(filepath.Join(part, "design.csv"))
	edit := func(f func(r map[string]any)) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			var r map[string]any
			if err := json.Unmarshal(record, &r); err != nil {
				t.Fatal(err)
			}
			f(r)
			b, _ := json.Marshal(r)
			if err := os.WriteFile(filepath.Join(dir, "design.json"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	replace := func(name string, with func(path string) error) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			p := filepath.Join(dir, name)
			os.Remove(p)
			if err := with(p); err != nil {
				t.Skip(err)
			}
		}
	}
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("victim\n"), 0o644)
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   string
	}{
		{"negative points_done", edit(func(r map[string]any) { r["points_done"] = -5 }), "points_done -5"},
		{"points_by_status null", edit(func(r map[string]any) { r["points_by_status"] = nil }), "points_by_status"},
		{"points_by_status too many", edit(func(r map[string]any) { r["points_by_status"] = map[string]int{"ok": 300} }), "points_by_status"},
		// Once extended design.csv to a 1 TB sparse file.
		{"csv_bytes beyond the file", edit(func(r map[string]any) { r["csv_bytes"] = 1e12 }), "csv_bytes 1000000000000"},
		{"csv_bytes mid-row", edit(func(r map[string]any) { r["csv_bytes"] = r["csv_bytes"].(float64) - 3 }), "does not end a row"},
		// A row end, but of another point: points would be skipped.
		{"csv_bytes at another point's row", edit(func(r map[string]any) {
			r["csv_bytes"] = float64(strings.Index(string(csv), "\n100,ok,") + 1)
		}), "is not of point 255"},
		// Statuses moved between counts (audit 15: a record saying 100
		// failed beside rows all ok was accepted).
		{"points_by_status moved", edit(func(r map[string]any) {
			n := int(r["points_done"].(float64))
			r["points_by_status"] = map[string]int{"ok": n - 1, "failed": 1}
		}), "does not match the rows' statuses"},
		// A row's condition or dataset edited, or a row dropped (the
		// record's csv_bytes kept in step): not the study's rows (audit
		// 16).
		{"condition edited", rowEdit(csv, func(f []string, cond int) []string { f[cond] = "99"; return f }), "is not the study's dataset and condition row"},
		{"dataset renamed", rowEdit(csv, func(f []string, cond int) []string { f[cond-1] = "forged"; return f }), "is not the study's dataset and condition row"},
		{"row dropped", rowEdit(csv, func([]string, int) []string { return nil }), "of point 0 is not the study's dataset and condition row"},
		{"last row of a point dropped", lineEdit(csv, s.Data[0].K, func([]string, int) []string { return nil }), "point 0 has"},
		// An output edited in the last point's rows (which a resume
		// evaluates again): not what the model gives (audit 17).
		{"output edited", func(t *testing.T, dir string) {
			lines := strings.SplitAfter(string(csv), "\n")
			n := len(lines) - 1 // the last is empty after the final newline
			lineEdit(csv, n-1, func(f []string, _ int) []string {
				f[len(f)-1] = "123456"
				return f
			})(t, dir)
		}, "are not what the model gives there"},
		{"points_done 0 with rows", edit(func(r map[string]any) { r["points_done"], r["points_by_status"] = 0, map[string]int{} }), "before the first point"},
		{"another header", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "design.csv"), append([]byte("point,status,a,b"), csv[16:]...), 0o644)
		}, "header"},
		// Once hung (a FIFO) or ran out of memory (/dev/zero).
		{"design.json a FIFO", replace("design.json", func(p string) error { return syscall.Mkfifo(p, 0o644) }), "named pipe"},
		{"design.json /dev/zero", replace("design.json", func(p string) error { return os.Symlink("/dev/zero", p) }), "character device"},
		{"design.json huge", replace("design.json", func(p string) error { return os.Truncate(p, 0) }), "design.json"},
		{"design.csv a FIFO", replace("design.csv", func(p string) error { return syscall.Mkfifo(p, 0o644) }), "design.csv is not a regular file"},
		// Once truncated and overwrote the file the link points to.
		{"design.csv a symlink", replace("design.csv", func(p string) error { return os.Symlink(victim, p) }), "design.csv is not a regular file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "design.json"), record, 0o644)
			os.WriteFile(filepath.Join(dir, "design.csv"), csv, 0o644)
			c.damage(t, dir)
			if c.name == "design.json huge" {
				f, _ := os.Create(filepath.Join(dir, "design.json"))
				f.Truncate(MaxRecordBytes + 1) // sparse
				f.Close()
			}
			done := make(chan error, 1)
			go func() {
				_, err := Run(context.Background(), s, dir, Options{Kind: "sobol", N: 300, Workers: 1, Resume: true})
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("error %v, want one mentioning %q", err, c.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("hung")
			}
		})
	}
	if b, _ := os.ReadFile(victim); string(b) != "victim\n" {
		t.Errorf("the file behind a symbolic link was changed: %q", b)
	}
}

// A record whose n was edited names another Latin hypercube than the one
// that wrote its rows: refused at the first row, not continued with the
// other hypercube's points (audit 15: a "complete" 40 000-point design
// of two hypercubes, 11 505 empty strata per parameter).
func TestResumeOtherDesignRefused(t *testing.T) {
	s := load(t, 1)
	dir := t.TempDir()
	o := Options{Kind: "lhs", N: 300, Seed: 3, Workers: 1, Stop: func(int) bool { return true }}
	if _, err := Run(context.Background(), s, dir, o); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "design.json")
	var r map[string]any
	b, _ := os.ReadFile(p)
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	r["n"] = 280
	b, _ = json.Marshal(r)
	os.WriteFile(p, b, 0o644)
	o.N, o.Resume, o.Stop = 280, true, nil
	_, err := Run(context.Background(), s, dir, o)
	if err == nil || !strings.Contains(err.Error(), "design.csv:2: point 0's parameters are not the design's") {
		t.Fatalf("got %v", err)
	}
	// The same record unedited resumes.
	r["n"] = 300
	b, _ = json.Marshal(r)
	os.WriteFile(p, b, 0o644)
	o.N = 300
	if _, err := Run(context.Background(), s, dir, o); err != nil {
		t.Fatalf("an untouched resume: %v", err)
	}
}

// TestNoWriteThroughLinks: a fresh run into a directory where design.csv
// is a symbolic link or a FIFO, or design.json.tmp a FIFO, does not write
// through the link or block.
func TestNoWriteThroughLinks(t *testing.T) {
	s := load(t, 1)
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("victim\n"), 0o644)
	dir := t.TempDir()
	os.Symlink(victim, filepath.Join(dir, "design.csv"))
	if _, err := Run(context.Background(), s, dir, Options{Kind: "sobol", N: 4}); err == nil || !strings.Contains(err.Error(), "design.csv") {
		t.Errorf("design.csv a symbolic link: error %v", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "victim\n" {
		t.Errorf("the file behind the link was changed: %q", b)
	}
	dir = t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "design.json.tmp"), 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), s, dir, Options{Kind: "sobol", N: 4})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("a FIFO left as design.json.tmp: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("hung on a FIFO design.json.tmp")
	}
}

// rowEdit returns a damage that rewrites design.csv's first row with
// edit (its fields and the index of the first condition; nil drops the
// row) and keeps design.json's csv_bytes in step.
func rowEdit(csv []byte, edit func(fields []string, cond int) []string) func(t *testing.T, dir string) {
	return lineEdit(csv, 1, edit)
}

// lineEdit is rowEdit of line n (1: the first row).
func lineEdit(csv []byte, n int, edit func(fields []string, cond int) []string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		lines := strings.SplitAfter(string(csv), "\n")
		header := strings.Split(strings.TrimSuffix(lines[0], "\n"), ",")
		cond := slices.Index(header, "dataset") + 1
		f := edit(strings.Split(strings.TrimSuffix(lines[n], "\n"), ","), cond)
		if f == nil {
			lines[n] = ""
		} else {
			lines[n] = strings.Join(f, ",") + "\n"
		}
		out := strings.Join(lines, "")
		os.WriteFile(filepath.Join(dir, "design.csv"), []byte(out), 0o644)
		p := filepath.Join(dir, "design.json")
		var r map[string]any
		b, _ := os.ReadFile(p)
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		r["csv_bytes"] = r["csv_bytes"].(float64) + float64(len(out)-len(csv))
		b, _ = json.Marshal(r)
		os.WriteFile(p, b, 0o644)
	}
}
