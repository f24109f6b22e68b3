package hostile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The run directory surfaces: kinfer run --resume, kinfer run --verify,
// kinfer report and kinfer analyze read a run directory that may come
// from elsewhere (a colleague's run, a download, a remote worker's
// bundle). Each case copies one of two template runs of the ligament study
// into its folder — a metropolis run stopped by SIGTERM (checkpoint.json,
// the method's state, samples.journal, run.json) or a small complete run
// (summary.json, samples.csv, samples.parquet) — and tampers with it.

// templates are made once, in the folder of the kinfer binary.
var templates struct {
	once              sync.Once
	stopped, complete string
	err               error
}

// stoppedStudy runs long enough (≈ 2 s of CPU) to be stopped with a
// checkpoint; completeStudy is quick.
var (
	stoppedStudy  = ligamentStudy("d.csv", "use = \"metropolis\"\nchains = 4\nburn_in = 2000\nsamples = 100000")
	completeStudy = ligamentStudy("d.csv", "use = \"metropolis\"\nchains = 2\nburn_in = 20\nsamples = 20")
)

func makeTemplates(t *testing.T) {
	root := filepath.Dir(kinferBin)
	mk := func(name, studyText string) (string, error) {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		os.WriteFile(filepath.Join(dir, "study.toml"), []byte(studyText), 0o644)
		os.WriteFile(filepath.Join(dir, "d.csv"), []byte(pullTest), 0o644)
		return dir, nil
	}
	dir, err := mk("template-stopped", stoppedStudy)
	if err != nil {
		templates.err = err
		return
	}
	// Stopped after a delay: long enough to be past loading the study
	// (the checkpoint is written when the run stops), short enough to be
	// before its end; tried again with longer delays on a busy machine.
	for _, delay := range []time.Duration{400 * time.Millisecond, time.Second, 3 * time.Second} {
		os.RemoveAll(filepath.Join(dir, "out"))
		kinferWithin(t, dir, []string{"run", "study.toml", "-o", "out", "--workers", "2", "--checkpoint-every", "100ms", "--no-report"},
			syscall.SIGTERM, delay, workDeadline)
		if _, err := os.Stat(filepath.Join(dir, "out", "checkpoint.json")); err == nil {
			templates.stopped = dir
			break
		}
	}
	if templates.stopped == "" {
		templates.err = fmt.Errorf("no stopped run with a checkpoint in %s", dir)
		return
	}
	if dir, templates.err = mk("template-complete", completeStudy); templates.err != nil {
		return
	}
	r := kinferWithin(t, dir, []string{"run", "study.toml", "-o", "out", "--workers", "1"}, 0, 0, workDeadline)
	if r.code != 0 {
		templates.err = fmt.Errorf("the complete template run failed: %v", r)
		return
	}
	templates.complete = dir
}

// fromTemplate copies a template (its study, data and run "out") into the
// case's folder; the records' absolute paths are rewritten to the copy.
func fromTemplate(stopped bool) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		templates.once.Do(func() { makeTemplates(t) })
		if templates.err != nil {
			t.Fatal(templates.err)
		}
		src := templates.complete
		if stopped {
			src = templates.stopped
		}
		err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			dst := filepath.Join(dir, rel)
			if info.IsDir() {
				return os.MkdirAll(dst, 0o755)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if strings.HasSuffix(p, ".json") {
				b = bytes.ReplaceAll(b, []byte(src), []byte(dir))
			}
			return os.WriteFile(dst, b, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// editJSON changes the record name (decoded as a map).
func editJSON(name string, f func(dir string, r map[string]any)) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var r map[string]any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		f(dir, r)
		if b, err = json.Marshal(r); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func setKey(name, key string, v any) func(t *testing.T, dir string) {
	return editJSON(name, func(_ string, r map[string]any) { r[key] = v })
}

// stateFile is the name of the method state file out/checkpoint.json
// refers to.
func stateFile(t *testing.T, dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "out", "checkpoint.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		File string `json:"method_state_file"`
	}
	if err := json.Unmarshal(b, &c); err != nil || c.File == "" {
		t.Fatalf("checkpoint.json names no state file: %v", err)
	}
	return filepath.Join("out", c.File)
}

// editState rewrites the method state and its sha256 in checkpoint.json,
// so that the state is read and decoded.
func editState(f func(t *testing.T, b []byte) []byte) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		p := filepath.Join(dir, stateFile(t, dir))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b = f(t, b)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(b)
		editJSON("out/checkpoint.json", func(_ string, r map[string]any) { r["method_state_sha256"] = hex.EncodeToString(h[:]) })(t, dir)
	}
}

// onState applies a file change (replaced, mkfifo, …) to the method state
// file.
func onState(change func(name string) func(t *testing.T, dir string)) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) { change(stateFile(t, dir))(t, dir) }
}

// victim is a file outside the run directory that links point to; it
// must be unchanged after the case.
func victim(t *testing.T, dir string) {
	os.WriteFile(filepath.Join(dir, "victim"), []byte("victim\n"), 0o644)
}

// hardlink makes name a hard link of target (both relative to the case's
// folder).
func hardlink(target, name string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		if err := os.Link(filepath.Join(dir, target), filepath.Join(dir, name)); err != nil {
			t.Skip("no hard links:", err)
		}
	}
}

func victimUnchanged(t *testing.T, dir string, _ result) {
	if b, _ := os.ReadFile(filepath.Join(dir, "victim")); string(b) != "victim\n" {
		t.Errorf("the file outside the run directory was changed: %q", b)
	}
}

// digestOut is the sha256 of every file in out/ but the lock.
func digestOut(t *testing.T, dir string) string {
	names, _ := filepath.Glob(filepath.Join(dir, "out", "*"))
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		if filepath.Base(n) == "kinfer.lock" {
			continue
		}
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(n), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// snapshot records digestOut in the case's folder; kept checks that a
// refused command left out/ as it was.
func snapshot(t *testing.T, dir string) {
	os.WriteFile(filepath.Join(dir, "out.sha256"), []byte(digestOut(t, dir)), 0o644)
}

func kept(t *testing.T, dir string, _ result) {
	before, _ := os.ReadFile(filepath.Join(dir, "out.sha256"))
	if got := digestOut(t, dir); got != string(before) {
		t.Errorf("the refused command changed the run directory")
	}
}

// insertAfter inserts text after the first occurrence of at in name;
// items is a list's elements: a comma follows them unless the list was
// empty.
func insertAfter(name, at, item string, n int) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		bombed, err := bomb(b, at, item, n)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		os.WriteFile(p, bombed, 0o644)
	}
}

// insertText inserts text after the first occurrence of at in name.
func insertText(name, at, text string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		i := bytes.Index(b, []byte(at))
		if i < 0 {
			t.Fatalf("%s has no %s", name, at)
		}
		i += len(at)
		os.WriteFile(p, append(append(append([]byte(nil), b[:i]...), text...), b[i:]...), 0o644)
	}
}

func bomb(b []byte, at, item string, n int) ([]byte, error) {
	i := bytes.Index(b, []byte(at))
	if i < 0 {
		return nil, fmt.Errorf("no %s", at)
	}
	i += len(at)
	var out bytes.Buffer
	out.Grow(len(b) + n*(len(item)+1))
	out.Write(b[:i])
	for k := range n {
		if k > 0 {
			out.WriteByte(',')
		}
		out.WriteString(item)
	}
	if rest := bytes.TrimLeft(b[i:], " \n\t"); len(rest) > 0 && rest[0] != ']' {
		out.WriteByte(',')
	}
	out.Write(b[i:])
	return out.Bytes(), nil
}

// rundirCase is a case on a template run, tampered with by more.
func rundirCase(name string, stopped bool, args []string, code int, want []string, more ...func(t *testing.T, dir string)) hcase {
	return hcase{name: name, code: code, want: want, args: args, setup: func(t *testing.T, dir string) {
		fromTemplate(stopped)(t, dir)
		for _, f := range more {
			f(t, dir)
		}
	}}
}

// keptNoHint is noResumeHint and kept: the refused resume left out/ as it
// was (its setup ends with snapshot).
func keptNoHint(c hcase) hcase {
	c = noResumeHint(c)
	hint := c.check
	c.check = func(t *testing.T, dir string, r result) {
		hint(t, dir, r)
		kept(t, dir, r)
	}
	return c
}

// journalAtLeast skips a case whose stopped template journaled fewer than
// n samples (stopped in its burn-in on a busy machine).
func journalAtLeast(n int64) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		var c struct {
			N int64 `json:"journal_samples"`
		}
		b, _ := os.ReadFile(filepath.Join(dir, "out", "checkpoint.json"))
		if err := json.Unmarshal(b, &c); err != nil || c.N < n {
			t.Skipf("the stopped template journaled %d samples (%v), fewer than %d", c.N, err, n)
		}
	}
}

// journalValue sets value k (θ's d values, then the log prior and the log
// likelihood) of journal record i (from the end when negative: −4 is the
// last step's first chain) to v.
func journalValue(i, k int, v float64) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		p := filepath.Join(dir, "out", "samples.journal")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		width := int(binary.LittleEndian.Uint64(b[8:16]))
		if i < 0 {
			var c struct {
				N int `json:"journal_samples"`
			}
			cb, _ := os.ReadFile(filepath.Join(dir, "out", "checkpoint.json"))
			if err := json.Unmarshal(cb, &c); err != nil {
				t.Fatal(err)
			}
			i += c.N
		}
		binary.LittleEndian.PutUint64(b[16+8*(i*width+k):], math.Float64bits(v))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// noResumeHint adds to c the check that its output does not advise
// --resume (a refusal that a resume would meet again).
func noResumeHint(c hcase) hcase {
	c.check = func(t *testing.T, _ string, r result) {
		if strings.Contains(r.stderr+r.stdout, "kinfer run --resume") {
			t.Errorf("a refused resume advises --resume again:\n%s", r.stderr)
		}
	}
	return c
}

func rundirCases() []hcase {
	resume := []string{"run", "--resume", "out", "--no-report"}
	report := []string{"report", "out"}
	verify := []string{"run", "--verify", "out"}
	w := func(s ...string) []string { return s }
	// anyBomb is a method report of 20 lists of a million empty objects
	// (60 MB of text, ≈ 1.3 GB decoded).
	anyBomb := "[" + strings.TrimSuffix(strings.Repeat("["+strings.TrimSuffix(strings.Repeat("{},", 1_000_000), ",")+"],", 20), ",") + "]"
	cs := []hcase{
		// kinfer run --resume: checkpoint.json.
		rundirCase("rundir-resume-checkpoint-fifo", true, resume, 1, w("checkpoint.json", "named pipe"), replaced("out/checkpoint.json", mkfifo("out/checkpoint.json"))),
		rundirCase("rundir-resume-checkpoint-dev-zero", true, resume, 1, w("checkpoint.json", "character device"), replaced("out/checkpoint.json", symlink("/dev/zero", "out/checkpoint.json"))),
		rundirCase("rundir-resume-checkpoint-sparse-2gib", true, resume, 1, w("checkpoint.json", "2 GiB"), replaced("out/checkpoint.json", sparse("out/checkpoint.json", 2<<30, "{"))),
		rundirCase("rundir-resume-checkpoint-truncated", true, resume, 1, w("checkpoint.json", "unexpected end|invalid character"), func(t *testing.T, dir string) {
			p := filepath.Join(dir, "out", "checkpoint.json")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)/2], 0o644)
		}),
		rundirCase("rundir-resume-checkpoint-not-json", true, resume, 1, w("checkpoint.json", "invalid character"), func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "out", "checkpoint.json"), []byte("PK\x03\x04 not a record"), 0o644)
		}),
		// 20 million numbers (40 MB) in the best point, which has 2: over
		// the bound of a list; 3 numbers: not the study's point.
		rundirCase("rundir-resume-best-theta-20m", true, resume, 1, w("checkpoint.json", `more than 1048576 values in the list "best.Theta"`),
			insertAfter("out/checkpoint.json", `"Theta":[`, "0", 20_000_000)),
		rundirCase("rundir-resume-best-theta-3", true, resume, 1, w("checkpoint.json", "the best point has 3 values"),
			insertAfter("out/checkpoint.json", `"Theta":[`, "0", 1)),
		// Tallies no run has (a negative starts_used once indexed the
		// study's initial points at −3 when a method asked for draws).
		rundirCase("rundir-resume-starts-used-negative", true, resume, 1, w("checkpoint.json", "starts_used is -3"), setKey("out/checkpoint.json", "starts_used", -3)),
		rundirCase("rundir-resume-starts-used-beyond", true, resume, 1, w("checkpoint.json", "starts_used is 7", "0 initial points"), setKey("out/checkpoint.json", "starts_used", 7)),
		rundirCase("rundir-resume-counts-negative", true, resume, 1, w("checkpoint.json", "counts.Evaluations is -5"),
			editJSON("out/checkpoint.json", func(_ string, r map[string]any) { r["counts"].(map[string]any)["Evaluations"] = -5 })),
		// A tally that would overflow when the resumed run adds its own
		// (audit 5: negative evaluation counts), and a planted best point
		// that no evaluation gives (it became the run's best).
		rundirCase("rundir-resume-counts-maxint64", true, resume, 1, w("checkpoint.json", "counts.Evaluations is 9223372036854775807", "2^53"),
			editJSON("out/checkpoint.json", func(_ string, r map[string]any) { r["counts"].(map[string]any)["Evaluations"] = int64(math.MaxInt64) })),
		rundirCase("rundir-resume-best-planted", true, resume, 1, w("checkpoint.json", "its best point", "evaluates to", "not written by this study"),
			editJSON("out/checkpoint.json", func(_ string, r map[string]any) {
				b := r["best"].(map[string]any)
				b["LogLik"], b["LogPrior"] = 1e300, 0.0
			})),
		rundirCase("rundir-resume-wall-1e309", true, resume, 1, w("checkpoint.json", "wall_seconds"), func(t *testing.T, dir string) {
			p := filepath.Join(dir, "out", "checkpoint.json")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(b, []byte(`"wall_seconds":`), []byte(`"wall_seconds":1e309,"x":`), 1), 0o644)
		}),
		// 300 000 made-up status names: the tallies are copied at every
		// batch, and the resume had not finished after 30 s (2 s without).
		rundirCase("rundir-resume-status-names-300000", true, resume, 1, w("checkpoint.json", "unknown status"),
			editJSON("out/checkpoint.json", func(_ string, r map[string]any) {
				m := r["counts"].(map[string]any)["ByStatus"].(map[string]any)
				for i := range 300_000 {
					m[fmt.Sprintf("x%d", i)] = 1
				}
			})),
		rundirCase("rundir-resume-wall-1e308", true, resume, 1, w("checkpoint.json", "wall_seconds is 1e+308"), setKey("out/checkpoint.json", "wall_seconds", 1e308)),
		rundirCase("rundir-resume-best-status-99", true, resume, 1, w("checkpoint.json", "best.Status is 99"),
			editJSON("out/checkpoint.json", func(_ string, r map[string]any) { r["best"].(map[string]any)["Status"] = 99 })),
		// A count the journal file cannot hold: refused as damaged, not as
		// "more than the memory budget" (audit 7), and no --resume hint.
		noResumeHint(rundirCase("rundir-resume-journal-samples-1e12", true, resume, 1, w("samples.journal", "the checkpoint needs", "run the study again"), setKey("out/checkpoint.json", "journal_samples", 1e12))),
		// Path tricks in the name of the method state file.
		rundirCase("rundir-resume-state-dot-dot", true, resume, 1, w("checkpoint.json", `bad method state file "../../etc/passwd"`), setKey("out/checkpoint.json", "method_state_file", "../../etc/passwd")),
		rundirCase("rundir-resume-state-absolute", true, resume, 1, w("checkpoint.json", `bad method state file "/etc/passwd"`), setKey("out/checkpoint.json", "method_state_file", "/etc/passwd")),
		rundirCase("rundir-resume-state-other-name", true, resume, 1, w("checkpoint.json", `bad method state file "run.json"`), setKey("out/checkpoint.json", "method_state_file", "run.json")),
		// The method state file itself.
		rundirCase("rundir-resume-state-link-out", true, resume, 1, w("checkpoint.json", "outside the folder"), victim,
			onState(func(n string) func(*testing.T, string) { return replaced(n, symlink("../victim", n)) })),
		rundirCase("rundir-resume-state-fifo", true, resume, 1, w("method state", "named pipe"),
			onState(func(n string) func(*testing.T, string) { return replaced(n, mkfifo(n)) })),
		rundirCase("rundir-resume-state-sparse-2gib", true, append(resume, "--memory-budget", "256MiB"), 1, w("method state", "2 GiB", "memory budget"),
			onState(func(n string) func(*testing.T, string) { return replaced(n, sparse(n, 2<<30, "{")) })),
		// 20 million empty samples (60 MB) in the state, with its sha256
		// in the checkpoint: ≈ 1.3 GB as samples; a million (3 MB, within
		// the bound of a list) would be 64 MB.
		rundirCase("rundir-resume-state-list-bomb", true, resume, 1, w("metropolis", `more than 1048576 values in the list "samples[0]"`), editState(func(t *testing.T, b []byte) []byte {
			// The list form an older kinfer wrote (still read), put
			// beside the packed samples_bin.
			b = bytes.Replace(b, []byte(`"samples_bin":`), []byte(`"samples":[[]],"samples_bin":`), 1)
			out, err := bomb(b, `"samples":[[`, "{}", 20_000_000)
			if err != nil {
				t.Fatal(err)
			}
			return out
		})),
		rundirCase("rundir-resume-state-million-samples", true, resume, 1, w("metropolis", "per byte"), editState(func(t *testing.T, b []byte) []byte {
			// The list form an older kinfer wrote (still read), put
			// beside the packed samples_bin.
			b = bytes.Replace(b, []byte(`"samples_bin":`), []byte(`"samples":[[]],"samples_bin":`), 1)
			out, err := bomb(b, `"samples":[[`, "{}", 1_000_000)
			if err != nil {
				t.Fatal(err)
			}
			return out
		})),
		// A chain set on a log likelihood the model never gave: refused
		// by the held points' evaluation (audit 15: 136 595 rows of it
		// written).
		keptNoHint(rundirCase("rundir-resume-state-forged-log-lik", true, resume, 1, w("method's held point", "evaluates to", "not written by this study"),
			editState(func(t *testing.T, b []byte) []byte {
				var st map[string]any
				if err := json.Unmarshal(b, &st); err != nil {
					t.Fatal(err)
				}
				ll, _ := st["log_lik"].([]any)
				started, _ := st["started"].([]any)
				if len(ll) == 0 || len(started) != len(ll) {
					t.Fatalf("no chains in the state: %.300s", b)
				}
				ll[0], started[0] = -100.0, true
				out, err := json.Marshal(st)
				if err != nil {
					t.Fatal(err)
				}
				return out
			}), snapshot)),
		rundirCase("rundir-resume-state-other-method", true, resume, 1, w("metropolis"), editState(func(*testing.T, []byte) []byte {
			return []byte(`{"format":1,"config":{"n":1000,"quantity":-1},"d":2,"seed":1,"draws":[[3000,0.01]],"values":[1],"log_prior":[0]}`)
		})),
		// A method state whose chains stand outside the study's bounds (as
		// another study's would): refused at the resume, its held points
		// evaluating to out-of-support (audit 15; audit 5 refused its
		// samples as they came).
		rundirCase("rundir-resume-state-foreign-chains", true, resume, 1, w("method's held point [1e+06", "evaluates to out-of-support", "not written by this study"),
			editState(func(t *testing.T, b []byte) []byte {
				// Every chain started, at k = 10⁶ (the template may have
				// stopped before its chains started, whose positions a
				// resume would then draw again).
				var st map[string]any
				if err := json.Unmarshal(b, &st); err != nil {
					t.Fatal(err)
				}
				xs, _ := st["x"].([]any)
				started, _ := st["started"].([]any)
				if len(xs) == 0 || len(started) != len(xs) {
					t.Fatalf("no chain positions in the state: %.300s", b)
				}
				for i := range xs {
					x := xs[i].([]any)
					x[0], started[i] = 1e6, true
				}
				// A template stopped so early that its first batch, the
				// chains' prior draws, was pending would have them drawn
				// again on resume, over the planted positions (a loaded
				// machine once did): no batch pending.
				st["pending"] = 0
				delete(st, "pending_chains")
				delete(st, "proposals")
				out, err := json.Marshal(st)
				if err != nil {
					t.Fatal(err)
				}
				return out
			})),
		// samples.journal.
		// A journal sample outside the study's bounds: no run of this study
		// wrote it (audit 5: another study's journal and state were
		// resumed into a "complete" run outside the prior).
		rundirCase("rundir-resume-journal-foreign", true, resume, 1, w("sample 1 of samples.journal", "outside the study's", "the journal is not this study's"),
			func(t *testing.T, dir string) {
				f, err := os.OpenFile(filepath.Join(dir, "out", "samples.journal"), os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				var b [8]byte
				binary.LittleEndian.PutUint64(b[:], math.Float64bits(1e6))
				if _, err := f.WriteAt(b[:], 16); err != nil { // the first sample's θ[0]
					t.Fatal(err)
				}
			}),
		rundirCase("rundir-resume-journal-fifo", true, resume, 1, w("samples.journal", "named pipe"), replaced("out/samples.journal", mkfifo("out/samples.journal"))),
		// A negative journal count, a negative tally: the checkpoint is
		// damaged, said so, with no --resume hint (audit 7: "no sample
		// journal", then "kinfer run --resume DIR", the command that had
		// just failed).
		noResumeHint(rundirCase("rundir-resume-journal-count-negative", true, resume, 1, w("journal_samples = -1", "run the study again"),
			setKey("out/checkpoint.json", "journal_samples", -1))),
		noResumeHint(rundirCase("rundir-resume-counts-negative-no-hint", true, resume, 1, w("counts.Evaluations is -5", "run the study again"),
			editJSON("out/checkpoint.json", func(_ string, r map[string]any) { r["counts"].(map[string]any)["Evaluations"] = -5 }))),
		rundirCase("rundir-resume-journal-link-out", true, resume, 1, w("samples.journal", "symbolic link"), func(t *testing.T, dir string) {
			victim(t, dir)
		}, replaced("out/samples.journal", symlink("../victim", "out/samples.journal"))),
		// A 2 GiB journal (67 million samples) that the checkpoint agrees
		// with: ≈ 15 GB as samples, refused by the memory budget.
		rundirCase("rundir-resume-journal-sparse-2gib", true, append(resume, "--memory-budget", "1GiB"), 1, w("samples.journal", "memory budget"),
			replaced("out/samples.journal", func(t *testing.T, dir string) {
				var hdr [16]byte
				copy(hdr[:], "KINFERJ1")
				binary.LittleEndian.PutUint64(hdr[8:], 4)
				sparse("out/samples.journal", 2<<30, string(hdr[:]))(t, dir)
			}), setKey("out/checkpoint.json", "journal_samples", (2<<30-16)/32)),
		// The inputs changed since the run: refused, and the run directory
		// is left as it was.
		rundirCase("rundir-resume-study-changed", true, resume, 1, w("other inputs", "restore them to resume, or run the study again into another -o"), func(t *testing.T, dir string) {
			f, _ := os.OpenFile(filepath.Join(dir, "study.toml"), os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("# changed\n")
			f.Close()
		}, snapshot),
		rundirCase("rundir-resume-data-changed", true, resume, 1, w("other inputs", "restore them to resume"), func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "d.csv"), []byte(strings.Replace(pullTest, "230", "231", 1)), 0o644)
		}, snapshot),
		// A checkpoint counting fewer journal samples than the method's
		// state needs: refused with the journal whole, no --resume hint
		// (audit 15: the journal was cut to the count, a million samples
		// lost, then the resume refused and advised again).
		keptNoHint(rundirCase("rundir-resume-journal-count-short-kept", true, resume, 1, w("restore samples", "run the study again"),
			journalAtLeast(8), editJSON("out/checkpoint.json", func(_ string, r map[string]any) {
				n, _ := r["journal_samples"].(json.Number).Int64()
				r["journal_samples"] = n - 4
			}), snapshot)),
		// A journal whose log prior or log likelihood no evaluation gives
		// (audit 15: copied into the completed samples.csv).
		keptNoHint(rundirCase("rundir-resume-journal-log-prior-inf", true, resume, 1, w("sample 1 of samples.journal has log prior +Inf", "run the study again"),
			journalAtLeast(1), journalValue(0, 2, math.Inf(1)), snapshot)),
		keptNoHint(rundirCase("rundir-resume-journal-log-lik-nan", true, resume, 1, w("sample 2 of samples.journal has log likelihood NaN", "run the study again"),
			journalAtLeast(2), journalValue(1, 3, math.NaN()), snapshot)),
		// Finite but impossible journal values (audit 16): a log
		// likelihood of −1e300 in a chain's kept sample (either the same θ
		// as the sample before with other values, or a fall no accepted
		// step gives), and one better than the run's best.
		keptNoHint(rundirCase("rundir-resume-journal-log-lik-minus-1e300", true, resume, 1, w("corrupt checkpoint: chain 0", "run the study again"),
			journalAtLeast(12), journalValue(8, 3, -1e300), snapshot)),
		keptNoHint(rundirCase("rundir-resume-journal-log-lik-better-than-best", true, resume, 1, w("better than the run's best point", "run the study again"),
			journalAtLeast(12), journalValue(-4, 0, 2500), journalValue(-4, 3, -1), snapshot)),
		// A sample moved to another θ with its values kept: found by the
		// chain's acceptance count when the move adds a change, else by
		// evaluating journal samples again (the last among them).
		keptNoHint(rundirCase("rundir-resume-journal-theta-moved", true, resume, 1, w(`corrupt checkpoint: chain 3|journal sample [2500`, "run the study again"),
			journalAtLeast(12), journalValue(-1, 0, 2500), snapshot)),
		// A metropolis state whose counts or adaptation no run reaches.
		keptNoHint(rundirCase("rundir-resume-state-log-lambda-700", true, resume, 1, w("log_lambda 700 outside", "run the study again"),
			editState(func(t *testing.T, b []byte) []byte {
				return bytes.Replace(b, []byte(`"log_lambda":`), []byte(`"log_lambda":700,"x_log_lambda":`), 1)
			}), snapshot)),
		keptNoHint(rundirCase("rundir-resume-state-accept-kept-forged", true, resume, 1, w("accepted 0 proposals after burn-in, but its", "run the study again"),
			journalAtLeast(400), editState(func(t *testing.T, b []byte) []byte {
				var st map[string]any
				if err := json.Unmarshal(b, &st); err != nil {
					t.Fatal(err)
				}
				acc := st["accept_kept"].([]any)
				for i := range acc {
					acc[i] = 0
				}
				out, _ := json.Marshal(st)
				return out
			}), snapshot)),
		// Tallies that disagree with each other (audit 15: Evaluations
		// edited to 0 was resumed into a summary of fewer evaluations
		// than ok points).
		keptNoHint(rundirCase("rundir-resume-counts-evaluations-zero", true, resume, 1, w("do not match counts.ByStatus", "run the study again"),
			editJSON("out/checkpoint.json", func(_ string, r map[string]any) { r["counts"].(map[string]any)["Evaluations"] = 0 }), snapshot)),
		// The lock file through a link: the pid was written into the
		// link's target, then truncated out of it.
		rundirCase("rundir-resume-lock-link-out", true, resume, 1, w("kinfer.lock", "symbolic link"), victim,
			replaced("out/kinfer.lock", symlink("../victim", "out/kinfer.lock"))),
		// run.json, read when there is no checkpoint.
		rundirCase("rundir-resume-run-json-fifo", true, resume, 1, w("run.json", "named pipe"),
			func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "out", "checkpoint.json")) },
			replaced("out/run.json", mkfifo("out/run.json"))),
		rundirCase("rundir-resume-run-json-sparse-2gib", true, resume, 1, w("run.json", "2 GiB"),
			func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "out", "checkpoint.json")) },
			replaced("out/run.json", sparse("out/run.json", 2<<30, "{"))),

		// kinfer report.
		rundirCase("rundir-report-summary-fifo", false, report, 1, w("summary.json", "named pipe"), replaced("out/summary.json", mkfifo("out/summary.json"))),
		rundirCase("rundir-report-summary-dev-zero", false, report, 1, w("summary.json", "character device"), replaced("out/summary.json", symlink("/dev/zero", "out/summary.json"))),
		rundirCase("rundir-report-summary-list-bomb", false, report, 1, w("summary.json", "per byte"), insertText("out/summary.json", `"method_report": `, anyBomb+`, "x": `)),
		rundirCase("rundir-report-params-list-bomb", false, report, 1, w("summary.json", "per byte"), insertAfter("out/summary.json", `"params": [`, "{}", 1_000_000)),
		// A summary naming another file as its study: a private key would
		// be copied into report.html.
		func() hcase {
			c := rundirCase("rundir-report-study-file-secret", false, report, 0, w("report:"), func(t *testing.T, dir string) {
				os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("-----BEGIN PRIVATE KEY----- hostile-secret\n"), 0o600)
			}, editJSON("out/summary.json", func(dir string, r map[string]any) { r["study_file"] = filepath.Join(dir, "secret.txt") }))
			c.check = func(t *testing.T, dir string, _ result) {
				b, _ := os.ReadFile(filepath.Join(dir, "out", "report.html"))
				if len(b) == 0 || bytes.Contains(b, []byte("hostile-secret")) {
					t.Errorf("report.html (%d bytes) holds the file summary.json names as its study", len(b))
				}
			}
			return c
		}(),
		// The run's study file changed after the run (or another study in
		// its place): neither its priors nor its model are the run's, and
		// it would name data and plugins to load; the report says so.
		rundirCase("rundir-report-study-edited", false, report, 0, w("not the one the run recorded"), func(t *testing.T, dir string) {
			p := filepath.Join(dir, "study.toml")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(p, append(b, []byte("\n# changed after the run\n")...), 0o644)
		}),
		rundirCase("rundir-report-study-file-dev-zero", false, report, 0, w("/dev/zero"), setKey("out/summary.json", "study_file", "/dev/zero")),
		rundirCase("rundir-report-analysis-list-bomb", false, report, 0, w("analysis.json", "per byte"), func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "out", "analysis.json"), []byte(`{"x":`+anyBomb+`}`), 0o644)
		}),
		rundirCase("rundir-report-analysis-fifo", false, report, 0, w("analysis.json", "named pipe"), mkfifo("out/analysis.json")),
		// A negative sample count (once a panic: makeslice) and one near
		// 2^63 (overflowed the thinning's i·n).
		rundirCase("rundir-report-samples-negative", false, report, 0, w("report:"), setKey("out/summary.json", "samples", -5)),
		rundirCase("rundir-report-samples-9e18", false, report, 0, w("report:"), setKey("out/summary.json", "samples", int64(9e18))),
		rundirCase("rundir-report-samples-sparse-2gib", false, report, 0, w("samples.csv"), replaced("out/samples.csv", sparse("out/samples.csv", 2<<30, "k,eps_r\n"))),

		// kinfer analyze.
		// A million empty stage records (3 MB, ≈ 32 MB decoded).
		rundirCase("rundir-analyze-summary-list-bomb", false, []string{"analyze", "out"}, 1, w("summary.json", "per byte"),
			insertText("out/summary.json", `"method_report": `, `{"stages": [`+strings.TrimSuffix(strings.Repeat("{},", 1_000_000), ",")+`]}, "x": `)),
		rundirCase("rundir-analyze-samples-fifo", false, []string{"analyze", "out"}, 1, w("samples.csv", "named pipe"), replaced("out/samples.csv", mkfifo("out/samples.csv"))),
		// kinfer report names a pipe or a device in samples.csv's place
		// (audit 5: "no samples"); analyze gives no --memory-budget hint
		// for what no budget lifts.
		rundirCase("rundir-report-samples-fifo", false, report, 0, w("samples.csv", "named pipe"), replaced("out/samples.csv", mkfifo("out/samples.csv"))),
		rundirCase("rundir-report-samples-dev-zero", false, report, 0, w("samples.csv", "character device"), replaced("out/samples.csv", symlink("/dev/zero", "out/samples.csv"))),
		func() hcase {
			c := rundirCase("rundir-analyze-samples-missing", false, []string{"analyze", "out"}, 1, w("samples.csv", "no such file"),
				func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "out", "samples.csv")) })
			c.check = func(t *testing.T, dir string, r result) {
				if strings.Contains(r.stderr, "--memory-budget") {
					t.Errorf("a missing samples.csv hints at --memory-budget: %s", r.stderr)
				}
			}
			return c
		}(),

		// kinfer run --verify: inputs named by the record (hashing
		// /dev/zero or a named pipe never ended), sample files (compared
		// line by line, whole lines in memory), the memory budget.
		rundirCase("rundir-verify-input-dev-zero", false, verify, 1, w("/dev/zero", "character device"), editJSON("out/summary.json", func(_ string, r map[string]any) {
			p := r["provenance"].(map[string]any)
			p["inputs"] = append(p["inputs"].([]any), map[string]any{"role": "data x", "path": "/dev/zero", "sha256": "00"})
		})),
		rundirCase("rundir-verify-input-fifo", false, verify, 1, w("fifo.csv", "named pipe"), mkfifo("fifo.csv"), editJSON("out/summary.json", func(dir string, r map[string]any) {
			p := r["provenance"].(map[string]any)
			p["inputs"] = append(p["inputs"].([]any), map[string]any{"role": "data x", "path": filepath.Join(dir, "fifo.csv"), "sha256": "00"})
		})),
		rundirCase("rundir-verify-inputs-list-bomb", false, verify, 1, w("summary.json", `more than 65536 values in the list "provenance.inputs"`),
			insertAfter("out/summary.json", `"inputs": [`, "{}", 20_000_000)),
		rundirCase("rundir-verify-samples-dev-zero", false, verify, 1, w("samples.csv", "character device"), replaced("out/samples.csv", symlink("/dev/zero", "out/samples.csv"))),
		rundirCase("rundir-verify-parquet-fifo", false, verify, 1, w("samples.parquet", "named pipe"), replaced("out/samples.parquet", mkfifo("out/samples.parquet"))),
		rundirCase("rundir-verify-memory-budget-1e18", false, verify, 0, w("identical", "re-run plans within"), setKey("out/summary.json", "memory_budget", int64(1e18))),
		rundirCase("rundir-verify-lock-link-out", false, verify, 1, w("kinfer.lock", "symbolic link"), victim,
			replaced("out/kinfer.lock", symlink("../victim", "out/kinfer.lock"))),
		// The lock file as a hard link to a file elsewhere, or holding a
		// user's file (a dataset named kinfer.lock): both were emptied,
		// by run, report and analyze alike (audit 5). A run refuses them;
		// a reader takes such a lock read-only (a cp -al snapshot).
		rundirCase("rundir-resume-lock-hardlink-out", true, resume, 1, w("kinfer.lock", "has 2 hard links"), victim,
			replaced("out/kinfer.lock", hardlink("victim", "out/kinfer.lock"))),
		rundirCase("rundir-report-lock-hardlink-out", false, report, 0, w("report:"), victim,
			replaced("out/kinfer.lock", hardlink("victim", "out/kinfer.lock"))),
		rundirCase("rundir-resume-lock-foreign", true, resume, 1, w("kinfer.lock", "not a kinfer lock file"), func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "out", "kinfer.lock"), []byte(pullTest), 0o644)
		}),
		// A design run's record (kinfer design's run directory): 5 million
		// empty parameters (16 MB, within its cap) were ≈ 400 MB of
		// abi.Param and more while the list grew.
		surrogateCase("rundir-train-design-params-bomb", designed(insertAfter("d/design.json", `"params": [`, "{}", 5_000_000)),
			trainArgs(""), 1, "design.json", `more than 1048576 values in the list "params"`),
		surrogateCase("rundir-design-resume-params-bomb", designed(editRecord(func(map[string]any) {}), insertAfter("d/design.json", `"params":[`, "{}", 5_000_000)),
			[]string{"design", "study.toml", "-o", "d", "--n", "16", "--resume"}, 1, "design.json", `more than 1048576 values in the list "params"`),
	}
	for i := range cs {
		switch c := &cs[i]; {
		case strings.HasSuffix(c.name, "-link-out"), strings.HasSuffix(c.name, "-hardlink-out"):
			c.check = victimUnchanged
		case strings.HasSuffix(c.name, "-changed"):
			c.check = kept
		}
	}
	return cs
}
