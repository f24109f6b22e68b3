package hostile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The surrogate surfaces: kinfer design (and the run directory it
// writes), kinfer train, kinfer combine and a surrogate file used as a
// model. Each case runs in a folder with the ligament study (study.toml,
// d.csv) and, where its setup says so, a design run "d" of 16 points and
// member files trained from it.

// surrogateCase is a case on the ligament study.
func surrogateCase(name string, setup func(t *testing.T, dir string), args []string, code int, want ...string) hcase {
	return hcase{name: name, code: code, want: want, setup: setup, args: args,
		files: map[string]string{"d.csv": pullTest, "study.toml": ligamentStudy("d.csv", "")}}
}

// run runs kinfer in dir as a step of a case's setup, which must succeed.
func run(t *testing.T, dir string, args ...string) {
	t.Helper()
	r := kinfer(t, dir, args, 0, 0)
	if r.code != 0 || len(problems(r)) > 0 {
		t.Fatalf("setup failed: %v", r)
	}
}

// designed makes the design run "d" (16 points), then applies more.
func designed(more ...func(t *testing.T, dir string)) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		run(t, dir, "design", "study.toml", "-o", "d", "--n", "16", "--workers", "1")
		for _, f := range more {
			f(t, dir)
		}
	}
}

// editRecord changes d/design.json (decoded as a map).
func editRecord(f func(r map[string]any)) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		p := filepath.Join(dir, "d", "design.json")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var r map[string]any
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		r["complete"] = false
		f(r)
		b, _ = json.Marshal(r)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// replaced removes name and puts what make makes in its place.
func replaced(name string, make func(t *testing.T, dir string)) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		os.Remove(filepath.Join(dir, name))
		make(t, dir)
	}
}

func symlink(target, name string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Skip("no symlinks:", err)
		}
	}
}

// heldout makes the design run "v" (8 points of a scrambled Sobol
// sequence, seed 2 — the default sobol ignores the seed, and its 8 points
// would be d's first 8): held-out data for d's surrogates.
func heldout(t *testing.T, dir string) {
	run(t, dir, "design", "study.toml", "-o", "v", "--n", "8", "--design", "sobol-owen", "--seed", "2", "--workers", "1")
}

// members trains network 1 and 2 of a two-network ensemble on d,
// validated on v (m1.json, m2.json).
func members(t *testing.T, dir string) {
	heldout(t, dir)
	for _, k := range []string{"1", "2"} {
		run(t, dir, "train", "d", "--validation", "v", "--members", "2", "--member", k, "--hidden", "4", "--epochs", "1", "-o", "m"+k+".json")
	}
}

// listBomb inserts n copies of item after the first occurrence of at in
// name.
func listBomb(name, at, item string, n int) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		i := strings.Index(s, at)
		if i < 0 {
			t.Fatalf("%s has no %s", name, at)
		}
		i += len(at)
		if err := os.WriteFile(p, []byte(s[:i]+strings.Repeat(item, n)+s[i:]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const quickNet = "--hidden 4 --members 1 --epochs 1"

func trainArgs(extra string) []string { return trainArgsTo("s.json", extra) }

// trainArgsTo is trainArgs writing to out (a flag is given once: kinfer
// refuses one given twice).
func trainArgsTo(out, extra string) []string {
	return append([]string{"train", "d", "-o", out}, strings.Fields(quickNet+" "+extra)...)
}

func surrogateCases() []hcase {
	resume := []string{"design", "study.toml", "-o", "d", "--n", "16", "--resume"}
	victimKept := func(t *testing.T, dir string, _ result) {
		if b, _ := os.ReadFile(filepath.Join(dir, "victim")); string(b) != "victim\n" {
			t.Errorf("the file behind the symbolic link was changed: %q", b)
		}
	}
	cs := []hcase{
		// kinfer design: absurd sizes are refused before the design is
		// made (10^12 points crashed the host out of memory; lhs-maximin
		// ran for hours, deaf to Ctrl-C).
		surrogateCase("design-n-1e12", nil, []string{"design", "study.toml", "-o", "d", "--n", "1000000000000"}, 1, "n = 1000000000000"),
		surrogateCase("design-maximin-100000", nil, []string{"design", "study.toml", "-o", "d", "--n", "100000", "--design", "lhs-maximin"}, 1, "lhs-maximin", "O(n²)"),
		// --resume on a tampered directory (each once a panic, a hang, a
		// crash out of memory, a 1 TB sparse file or a write through a
		// link).
		surrogateCase("design-resume-negative-done", designed(editRecord(func(r map[string]any) { r["points_done"] = -5 })), resume, 1, "design.json", "points_done -5"),
		surrogateCase("design-resume-null-status", designed(editRecord(func(r map[string]any) { r["points_by_status"] = nil })), resume, 1, "design.json", "points_by_status"),
		surrogateCase("design-resume-csv-bytes-1e12", designed(editRecord(func(r map[string]any) { r["csv_bytes"] = 1e12 })), resume, 1, "design.csv", "csv_bytes 1000000000000"),
		surrogateCase("design-resume-record-fifo", designed(replaced("d/design.json", mkfifo("d/design.json"))), resume, 1, "design.json", "named pipe"),
		surrogateCase("design-resume-record-dev-zero", designed(replaced("d/design.json", symlink("/dev/zero", "d/design.json"))), resume, 1, "design.json", "character device"),
		surrogateCase("design-resume-record-sparse-2gib", designed(replaced("d/design.json", sparse("d/design.json", 2<<30, "{"))), resume, 1, "design.json", "2 GiB"),
		surrogateCase("design-resume-csv-symlink", designed(editRecord(func(map[string]any) {}), func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "victim"), []byte("victim\n"), 0o644)
		}, replaced("d/design.csv", symlink("../victim", "d/design.csv"))), resume, 1, "design.csv", "not a regular file"),
		surrogateCase("design-csv-fifo", mkfifo("design.csv"), []string{"design", "study.toml", "-o", ".", "--n", "4"}, 1, "design.csv", "named pipe"),
		surrogateCase("design-record-tmp-fifo", mkfifo("design.json.tmp"), []string{"design", "study.toml", "-o", ".", "--n", "4"}, 0, "done"),

		// kinfer train: a setting that cannot work is refused before the
		// training (NaN once failed on writing the file, after the
		// training, leaving an empty file), and so is an -o that cannot
		// be written.
		surrogateCase("train-dropout-nan", designed(), trainArgs("--dropout NaN"), 2, "--dropout NaN must be finite"),
		surrogateCase("train-lr-1e300", designed(), trainArgs("--lr 1e300"), 1, "diverged"),
		// Each network within the bound, the ensemble 16 times over it
		// (≈ 34 GB to train): once took the machine.
		surrogateCase("train-64-members-4096x4096", designed(), []string{"train", "d", "-o", "s.json", "--members", "64", "--hidden", "4096,4096", "--epochs", "1"}, 1, "exceed"),
		// A network inside the parameter bound whose training and file
		// need more than the memory budget: refused before training
		// (audit 5: "fatal error: out of memory" while writing the file).
		surrogateCase("train-5700x5700-budget", designed(), append([]string{"train", "d", "-o", "s.json"}, strings.Fields("--hidden 5700,5700 --members 1 --epochs 1 --memory-budget 1GiB")...), 1,
			"32529902 parameters need about 2.18 GiB", "more than the memory budget of 1 GiB"),
		surrogateCase("train-points-negative", designed(), trainArgs("--points -3"), 2, "--points -3"),
		surrogateCase("train-o-missing-folder", designed(), trainArgsTo("nowhere/s.json", ""), 1, "nowhere"),
		surrogateCase("train-o-folder", designed(), trainArgsTo("d", ""), 1, "-o d is a folder"),
		// A design.csv cut at a row's end, or with rows repeated, parses:
		// the length design.json records tells (once trained on silently).
		surrogateCase("train-design-rows-repeated", designed(func(t *testing.T, dir string) {
			p := filepath.Join(dir, "d", "design.csv")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append(b, b[strings.IndexByte(string(b), '\n')+1:]...), 0o644)
		}), trainArgs(""), 1, "design.csv", "csv_bytes"),
		surrogateCase("train-design-csv-fifo", designed(replaced("d/design.csv", mkfifo("d/design.csv"))), trainArgs(""), 1, "design.csv", "named pipe"),
		// Kriging on 100 000 points (400 000 samples) is refused before
		// its n² correlation matrices are allocated.
		surrogateCase("train-kriging-100000-points", func(t *testing.T, dir string) {
			run(t, dir, "design", "study.toml", "-o", "d", "--n", "100000", "--workers", "1")
		}, []string{"train", "d", "-o", "k.json", "--kind", "kriging"}, 1, "exceed what a Kriging file holds"),

		// kinfer combine.
		surrogateCase("combine-member-fifo", designed(members, mkfifo("fifo.json")), []string{"combine", "m1.json", "fifo.json", "--validation", "v", "-o", "c.json"}, 1, "fifo.json", "named pipe"),
		surrogateCase("combine-member-twice", designed(members), []string{"combine", "m1.json", "m1.json", "--validation", "v", "-o", "c.json"}, 1, "member 1 is given twice"),
		surrogateCase("combine-member-sparse-2gib", designed(members, sparse("big.json", 2<<30, "{")), []string{"combine", "m1.json", "big.json", "--validation", "v", "-o", "c.json"}, 1, "big.json", "2 GiB"),
		surrogateCase("combine-report-fifo", designed(members, replaced("m2.report.json", mkfifo("m2.report.json"))), []string{"combine", "m1.json", "m2.json", "--validation", "v", "-o", "c.json"}, 0, "written: c.json"),
		surrogateCase("combine-nested-member", designed(members, func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "nested.json"), []byte(strings.Repeat("[", 1_000_000)), 0o644)
		}), []string{"combine", "m1.json", "nested.json", "--validation", "v", "-o", "c.json"}, 1, "nested.json"),
		// A member file without its training records (once a panic).
		surrogateCase("combine-member-no-training", designed(members, func(t *testing.T, dir string) {
			p := filepath.Join(dir, "m1.json")
			b, _ := os.ReadFile(p)
			var f map[string]any
			if err := json.Unmarshal(b, &f); err != nil {
				t.Fatal(err)
			}
			delete(f, "training")
			b, _ = json.Marshal(f)
			os.WriteFile(p, b, 0o644)
		}), []string{"combine", "m1.json", "m2.json", "--validation", "v", "-o", "c.json"}, 1, "part 1 has 1 networks and 0 training records"),
		// Member reports claiming 1e308 s each: their sum, +Inf, once made
		// the combined report unwritable (after the ensemble was written).
		surrogateCase("combine-report-1e308-seconds", designed(members, func(t *testing.T, dir string) {
			for _, k := range []string{"1", "2"} {
				p := filepath.Join(dir, "m"+k+".report.json")
				b, _ := os.ReadFile(p)
				os.WriteFile(p, []byte(strings.Replace(string(b), `"train_seconds": `, `"train_seconds": 1e308, "x": `, 1)), 0o644)
			}
		}), []string{"combine", "m1.json", "m2.json", "--validation", "v", "-o", "c.json"}, 0, "written: c.json"),
		// A member whose training records are 20 million empty objects
		// (60 MB of text): decoded, ≈ 1.4 GB of records; refused by the
		// list's bound before anything is decoded. The same file through
		// kinfer inspect, and 2^20 + 1 numbers in a list of weights.
		surrogateCase("combine-member-list-bomb", designed(members, listBomb("m2.json", `"training": [`, "{},", 20_000_000)),
			[]string{"combine", "m1.json", "m2.json", "--validation", "v", "-o", "c.json"}, 1, "m2.json", `more than 64 values in the list "training"`),
		surrogateCase("inspect-list-bomb", designed(members, listBomb("m2.json", `"training": [`, "{},", 20_000_000)),
			[]string{"inspect", "m2.json"}, 1, "m2.json", `more than 64 values in the list "training"`),
		surrogateCase("inspect-number-bomb", designed(members, listBomb("m2.json", `"weights": [`, "0,", 1<<20)),
			[]string{"inspect", "m2.json"}, 1, "m2.json", "at most 1048576"),
		// kinfer score reads the same files through the same bounds.
		surrogateCase("score-list-bomb", designed(members, listBomb("m2.json", `"training": [`, "{},", 20_000_000)),
			[]string{"score", "m2.json", "d"}, 1, "m2.json", `more than 64 values in the list "training"`),
		surrogateCase("score-design-fifo", designed(members, replaced("d/design.json", mkfifo("d/design.json"))),
			[]string{"score", "m1.json", "d"}, 1, "design.json", "named pipe"),
		surrogateCase("score-surrogate-dev-zero", designed(members, symlink("/dev/zero", "z.json")),
			[]string{"score", "z.json", "d"}, 1, "z.json", "character device"),
		// A file no study can load (its parameter box inverted) is not
		// scored as if it were a model (audit 15).
		surrogateCase("score-inverted-box", designed(members, func(t *testing.T, dir string) {
			p := filepath.Join(dir, "m1.json")
			var f map[string]any
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &f); err != nil {
				t.Fatal(err)
			}
			pv := f["provenance"].(map[string]any)
			pv["param_lower"], pv["param_upper"] = pv["param_upper"], pv["param_lower"]
			b, _ = json.Marshal(f)
			os.WriteFile(p, b, 0o644)
		}), []string{"score", "m1.json", "v"}, 1, "m1.json: not usable as a model", "want lower < upper"),
		surrogateCase("combine-o-missing-folder", designed(members), []string{"combine", "m1.json", "m2.json", "--validation", "v", "-o", "no/c.json"}, 1, "no/c.json"),
	}
	for i := range cs {
		if cs[i].name == "design-resume-csv-symlink" {
			cs[i].check = victimKept
		}
	}
	return cs
}
