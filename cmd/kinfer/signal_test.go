package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// kinferBin is the kinfer binary TestMain builds, for the tests that need a
// separate process (signals, kills, concurrent runs).
var kinferBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kinfer-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	kinferBin = filepath.Join(dir, "kinfer")
	if out, err := exec.Command("go", "build", "-o", kinferBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building kinfer: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// stopWithin is the bound on the time from a signal to the process's exit.
// The machinery behind it is an interrupt of the plugin call in progress
// (or, while loading, giving the loading up after loadGrace); the bound is
// generous against a loaded machine, not a benchmark.
const stopWithin = time.Second

// proc is a kinfer process started by startKinfer.
type proc struct {
	cmd    *exec.Cmd
	stderr *lineLog
	stdout *strings.Builder // complete once done has been received from
	done   chan error
}

// lineLog collects a process's stderr and lets a test wait for a line.
type lineLog struct {
	lines chan string
	all   strings.Builder
}

func startKinfer(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(kinferBin, args...)
	cmd.Env = append(os.Environ(), env...)
	pr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := &strings.Builder{}
	cmd.Stdout = stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stderr: &lineLog{lines: make(chan string, 1000)}, stdout: stdout, done: make(chan error, 1)}
	scanned := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			p.stderr.all.WriteString(sc.Text() + "\n")
			select {
			case p.stderr.lines <- sc.Text():
			default:
			}
		}
		close(scanned)
	}()
	go func() { <-scanned; p.done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	return p
}

// waitLine waits for a stderr line containing s.
func (p *proc) waitLine(t *testing.T, s string, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case l := <-p.stderr.lines:
			if strings.Contains(l, s) {
				return
			}
		case <-deadline:
			t.Fatalf("no stderr line with %q within %v", s, timeout)
		}
	}
}

// signalAndWait sends sig and returns how long the process took to exit
// and its exit code (−1: still running after 10 s).
func (p *proc) signalAndWait(t *testing.T, sig syscall.Signal) (time.Duration, int) {
	t.Helper()
	start := time.Now()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
		return time.Since(start), p.cmd.ProcessState.ExitCode()
	case <-time.After(10 * time.Second):
		return time.Since(start), -1
	}
}

// spinInitWasm is a module whose _initialize never returns:
//
//	(module
//	  (memory (export "memory") 1)
//	  (func (export "_initialize") (loop $l (br $l)))
//	  (func (export "kinfer_abi_version") (result i32) (i32.const 1)))
//
// (wat2wasm 1.0.x), for a study whose plugin hangs in instantiation.
const spinInitWasm = "0061736d010000000108026000006000017f03030200010503010001072d03066d656d6f727902000b5f696e697469616c697a650000126b696e6665725f6162695f76657273696f6e00010a0e02070003400c000b0b040041010b"

// phaseStudy writes a study that stays in one phase of a run until it is
// interrupted, and returns its path and the environment for kinfer.
func phaseStudy(t *testing.T, phase string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	switch phase {
	case "compile":
		// The 3 MB arm plugin compiles for seconds without the cache.
		man, _ := filepath.Abs("../../plugins/go/arm/plugin.toml")
		return armStudy(t, dir, `plugin = "`+man+`"`, 10), []string{"KINFER_CACHE_DIR=-"}
	case "instantiate":
		b, _ := hex.DecodeString(spinInitWasm)
		os.WriteFile(filepath.Join(dir, "spininit.wasm"), b, 0o644)
		os.WriteFile(filepath.Join(dir, "plugin.toml"), []byte("name = \"spininit\"\nversion = \"1.0.0\"\nkind = \"model\"\nabi = 1\nwasm = \"spininit.wasm\"\n[limits]\nmemory_mib = 16\ntimeout_ms = 600000\n"), 0o644)
	case "builtin":
		// A built-in model's evaluation cannot be interrupted: the line
		// model sleeps for 10 minutes per evaluation, and the stop must
		// abandon it (target.Grace).
		os.WriteFile(filepath.Join(dir, "study.toml"), []byte(slowLineStudy), 0o644)
		os.WriteFile(filepath.Join(dir, "d.csv"), []byte("x,y\n1,2\n"), 0o644)
		return filepath.Join(dir, "study.toml"), nil
	case "call":
		// spin's model loops forever; its own timeout is raised so that
		// only the signal can stop the call.
		src := "../../host/testdata/plugins/spin/"
		os.WriteFile(filepath.Join(dir, "spin.wasm"), mustRead(t, src+"spin.wasm"), 0o644)
		man := strings.Replace(string(mustRead(t, src+"plugin.toml")), "timeout_ms = 100", "timeout_ms = 600000", 1)
		os.WriteFile(filepath.Join(dir, "plugin.toml"), []byte(man), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "study.toml"), []byte(strings.Replace(spinStudy, "%s", filepath.Join(dir, "plugin.toml"), 1)), 0o644)
	os.WriteFile(filepath.Join(dir, "d.csv"), []byte("x,y\n1,2\n"), 0o644)
	return filepath.Join(dir, "study.toml"), nil
}

// slowLineStudy's every evaluation takes 10 minutes, asleep.
const slowLineStudy = `name = "slow"
[model]
use = "line"
cost_ms = 600000
wait = "sleep"
[[data]]
name = "d"
file = "d.csv"
[[likelihood]]
use = "gaussian"
sigma = 1.0
[prior]
a = { uniform = [0.0, 1.0] }
b = { uniform = [0.0, 1.0] }
[method]
use = "metropolis"
chains = 2
`

// SIGINT and SIGTERM (and SIGHUP) stop a run within stopWithin in every phase — while a
// plugin compiles, while one is instantiated, during a plugin call, during
// a built-in model's evaluation — and
// the run still writes summary.json with "complete": false; stopped during
// a call, it also writes its checkpoint.
func TestSignalStopsEveryPhase(t *testing.T) {
	for _, phase := range []string{"compile", "instantiate", "call", "builtin"} {
		sigs := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}
		if phase == "builtin" {
			// A closing terminal's SIGHUP too (audit 18: it killed the
			// run with nothing written).
			sigs = append(sigs, syscall.SIGHUP)
		}
		for _, sig := range sigs {
			t.Run(phase+"/"+sig.String(), func(t *testing.T) {
				study, env := phaseStudy(t, phase)
				out := filepath.Join(t.TempDir(), "out")
				p := startKinfer(t, env, "run", study, "-o", out, "--verbose", "--workers", "2")
				marker := "kinfer: loading"
				if phase == "call" || phase == "builtin" {
					marker = "kinfer: running"
				}
				p.waitLine(t, marker, 20*time.Second)
				time.Sleep(300 * time.Millisecond) // well inside the phase
				el, code := p.signalAndWait(t, sig)
				t.Logf("%s: exit %d %v after the signal", phase, code, el)
				if code < 0 || el > stopWithin {
					t.Fatalf("%s, %v: exit %d after %v, want an exit within %v\n%s", phase, sig, code, el, stopWithin, p.stderr.all.String())
				}
				if code == 0 {
					t.Fatalf("an interrupted run exited 0")
				}
				if s := readSummary(t, out); s.Complete {
					t.Fatal("summary.json says complete")
				}
				if !strings.Contains(string(mustRead(t, filepath.Join(out, "summary.json"))), "interrupted by") {
					t.Errorf("summary.json does not say it was interrupted:\n%s", mustRead(t, filepath.Join(out, "summary.json")))
				}
				if phase == "call" || phase == "builtin" {
					if _, err := os.Stat(filepath.Join(out, "checkpoint.json")); err != nil {
						t.Errorf("no checkpoint after a stop during a call: %v", err)
					}
					if !strings.Contains(p.stderr.all.String(), "kinfer run --resume "+out) {
						t.Errorf("no resume hint:\n%s", p.stderr.all.String())
					}
				}
			})
		}
	}
}

// kinfer design stops within stopWithin too when a built-in evaluation
// does not end, and says how to continue.
func TestDesignStopsDuringBuiltinEvaluation(t *testing.T) {
	study, _ := phaseStudy(t, "builtin")
	out := filepath.Join(t.TempDir(), "out")
	p := startKinfer(t, nil, "design", study, "-n", "16", "-o", out, "--workers", "2")
	// design.json is written once the study is loaded, before the first
	// chunk is evaluated.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(out, "design.json")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no design.json within 20 s\n%s", p.stderr.all.String())
		}
	}
	time.Sleep(300 * time.Millisecond)
	el, code := p.signalAndWait(t, syscall.SIGINT)
	if code <= 0 || el > stopWithin {
		t.Fatalf("exit %d after %v, want a failed exit within %v\n%s", code, el, stopWithin, p.stderr.all.String())
	}
	if !strings.Contains(p.stdout.String(), "STOPPED (resume with --resume) — 0 of 16") {
		t.Errorf("stdout does not say the design stopped at 0 of 16:\n%s", p.stdout.String())
	}
	// Said as an interruption, not Go's "context canceled" (audit 10).
	if e := p.stderr.all.String(); !strings.Contains(e, "interrupted by a signal; the points so far are written") || strings.Contains(e, "context canceled") {
		t.Errorf("stderr:\n%s", e)
	}
}

// A method plugin spinning in kinfer_method_ask (its own limits an hour
// and 10^15 fuel) does not hold up the stop: the call is interrupted
// study.StopGrace after the signal, and the run ends within stopWithin.
func TestSignalStopsSpinningMethod(t *testing.T) {
	study, out := spinningMethodStudy(t, "loopask")
	p := startKinfer(t, nil, "run", study, "-o", out, "--verbose")
	p.waitLine(t, "kinfer: running", 20*time.Second)
	time.Sleep(300 * time.Millisecond)
	el, code := p.signalAndWait(t, syscall.SIGINT)
	if code <= 0 || el > stopWithin {
		t.Fatalf("exit %d after %v, want a failed exit within %v\n%s", code, el, stopWithin, p.stderr.all.String())
	}
	if s := readSummary(t, out); s.Complete {
		t.Fatal("summary.json says complete")
	}
}

// spinningMethodStudy is the quickstart with the hostile method plugin of
// test/hostile in the given mode.
func spinningMethodStudy(t *testing.T, mode string) (study, out string) {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "method"), 0o755)
	os.WriteFile(filepath.Join(dir, "method", "method.wasm"), mustRead(t, "../../test/hostile/testdata/wat/method.wasm"), 0o644)
	os.WriteFile(filepath.Join(dir, "method", "plugin.toml"), []byte("name = \"spinning-method\"\nversion = \"1\"\nkind = \"method\"\nabi = 1\nwasm = \"method.wasm\"\n[limits]\nmemory_mib = 16\ntimeout_ms = 3600000\nfuel = 1_000_000_000_000_000\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "force_length.csv"), mustRead(t, "../../examples/quickstart/force_length.csv"), 0o644)
	src := string(mustRead(t, "../../examples/quickstart/study.toml"))
	src = src[:strings.Index(src, "[method]")] + "[method]\nplugin = \"method/plugin.toml\"\nmode = \"" + mode + "\"\n"
	study = filepath.Join(dir, "study.toml")
	os.WriteFile(study, []byte(src), 0o644)
	return study, filepath.Join(dir, "out")
}

// Two signals at once — as `timeout` sends, to the process and to its
// process group — are one stop: the run stops cleanly (exit 1, summary and
// checkpoint written), not at once (130).
func TestSignalDeliveredTwiceIsOneStop(t *testing.T) {
	study, _ := phaseStudy(t, "builtin")
	out := filepath.Join(t.TempDir(), "out")
	p := startKinfer(t, nil, "run", study, "-o", out, "--verbose", "--workers", "2")
	p.waitLine(t, "kinfer: running", 20*time.Second)
	time.Sleep(300 * time.Millisecond)
	p.cmd.Process.Signal(syscall.SIGTERM)
	el, code := p.signalAndWait(t, syscall.SIGTERM)
	if code != 1 || el > stopWithin {
		t.Fatalf("exit %d after %v, want 1 within %v\n%s", code, el, stopWithin, p.stderr.all.String())
	}
	if _, err := os.Stat(filepath.Join(out, "checkpoint.json")); err != nil {
		t.Errorf("no checkpoint: %v", err)
	}
}

// A second signal exits at once (status 130), even when the first one's
// stop is still under way: here a method plugin spins in
// kinfer_method_report (which the stop still calls, to write the partial
// results, and does not interrupt; its own limits are an hour and 10^15
// fuel).
func TestSecondSignalExits(t *testing.T) {
	study, out := spinningMethodStudy(t, "loopreport")
	p := startKinfer(t, nil, "run", study, "-o", out, "--verbose")
	p.waitLine(t, "kinfer: running", 20*time.Second)
	time.Sleep(200 * time.Millisecond)
	p.cmd.Process.Signal(syscall.SIGINT)
	p.waitLine(t, "a second signal exits at once", 5*time.Second)
	time.Sleep(2 * repeatWindow) // the method still spins; past the window of a repeated delivery
	el, code := p.signalAndWait(t, syscall.SIGINT)
	if code != 130 || el > stopWithin {
		t.Fatalf("exit %d after %v, want 130 at once\n%s", code, el, p.stderr.all.String())
	}
}

// Two runs into one directory: the second is refused at once, naming the
// directory and the first one's pid; the first's samples.csv is intact.
func TestSecondRunOnSameDirectoryRefused(t *testing.T) {
	dir := t.TempDir()
	src := strings.Replace(string(mustRead(t, "../../examples/quickstart/study.toml")), "samples = 5000", "samples = 30000", 1)
	os.WriteFile(filepath.Join(dir, "study.toml"), []byte(src), 0o644)
	os.WriteFile(filepath.Join(dir, "force_length.csv"), mustRead(t, "../../examples/quickstart/force_length.csv"), 0o644)
	out := filepath.Join(dir, "out")
	first := startKinfer(t, nil, "run", filepath.Join(dir, "study.toml"), "-o", out, "--verbose", "--workers", "1")
	first.waitLine(t, "kinfer: running", 20*time.Second)
	for _, args := range [][]string{{"run", filepath.Join(dir, "study.toml"), "-o", out}, {"run", "--resume", out}} {
		start := time.Now()
		cmd := exec.Command(kinferBin, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		want := fmt.Sprintf("%s is locked by another kinfer process (pid %d)", out, first.cmd.Process.Pid)
		if err == nil || !strings.Contains(stderr.String(), want) {
			t.Errorf("%v: %v, stderr %q; want a refusal with %q", args, err, stderr.String(), want)
		}
		t.Logf("%v refused after %v", args, time.Since(start))
	}
	select {
	case err := <-first.done:
		if err != nil {
			t.Fatalf("first run: %v\n%s", err, first.stderr.all.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("first run did not finish")
	}
	rows := strings.Count(string(mustRead(t, filepath.Join(out, "samples.csv"))), "\n")
	if rows != 1+4*30000 {
		t.Fatalf("samples.csv has %d lines, want %d", rows, 1+4*30000)
	}
}

// A method that cannot checkpoint: an explicit --checkpoint-every is
// refused; without it the run goes on, and after a kill --resume says what
// happened instead of "completed".
func TestMethodWithoutCheckpoint(t *testing.T) {
	dir := t.TempDir()
	man, _ := filepath.Abs("../../host/testdata/plugins/nockpt/plugin.toml")
	src := string(mustRead(t, "../../examples/quickstart/study.toml"))
	src = src[:strings.Index(src, "[method]")] + "[method]\nplugin = \"" + man + "\"\nchains = 4\nburn_in = 2000\nsamples = 200000\n"
	study := filepath.Join(dir, "study.toml")
	os.WriteFile(study, []byte(src), 0o644)
	os.WriteFile(filepath.Join(dir, "force_length.csv"), mustRead(t, "../../examples/quickstart/force_length.csv"), 0o644)
	out := filepath.Join(dir, "out")
	code, _, errs := kinfer(t, "run", study, "-o", out, "--checkpoint-every", "1s")
	if code != 1 || !strings.Contains(errs, "--checkpoint-every: method nockpt") || !strings.Contains(errs, "cannot save its state") {
		t.Fatalf("explicit --checkpoint-every: exit %d, %q", code, errs)
	}
	p := startKinfer(t, nil, "run", study, "-o", out, "--verbose")
	p.waitLine(t, "kinfer: running", 20*time.Second)
	time.Sleep(200 * time.Millisecond)
	pid := p.cmd.Process.Pid
	p.cmd.Process.Kill()
	<-p.done
	code, _, errs = kinfer(t, "run", "--resume", out)
	want := fmt.Sprintf("the run in %s was killed while running (pid %d", out, pid)
	if code != 1 || !strings.Contains(errs, want) || !strings.Contains(errs, "its method "+man+" cannot checkpoint; run it again: kinfer run "+study+" -o "+out) {
		t.Fatalf("--resume after a kill: exit %d, %q; want %q", code, errs, want)
	}
	if strings.Contains(errs, "completed") {
		t.Fatalf("--resume claims the killed run completed: %q", errs)
	}
}

// A stop while the end-of-run report evaluates the model for its fit
// figures (here 100 predictive samples of a model that sleeps 200 ms per
// evaluation) ends the process within stopWithin too.
func TestSignalStopsReportPhase(t *testing.T) {
	dir := t.TempDir()
	study := strings.Replace(strings.Replace(slowLineStudy, "cost_ms = 600000", "cost_ms = 200", 1), "chains = 2\n", "chains = 2\nburn_in = 2\nsamples = 3\n", 1)
	os.WriteFile(filepath.Join(dir, "study.toml"), []byte(study), 0o644)
	os.WriteFile(filepath.Join(dir, "d.csv"), []byte("x,y\n1,2\n"), 0o644)
	p := startKinfer(t, nil, "run", filepath.Join(dir, "study.toml"), "-o", filepath.Join(dir, "out"), "--verbose", "--workers", "2")
	p.waitLine(t, "kinfer: writing", 60*time.Second)
	time.Sleep(300 * time.Millisecond)
	el, code := p.signalAndWait(t, syscall.SIGINT)
	if code < 0 || el > stopWithin {
		t.Fatalf("exit %d after %v, want an exit within %v\n%s", code, el, stopWithin, p.stderr.all.String())
	}
}

// An interrupted run --verify removes its scratch re-run (audit 10: a
// run-sized folder was left in the temporary directory) and says it was
// interrupted.
func TestVerifyInterruptedLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	study := strings.Replace(strings.Replace(slowLineStudy, "cost_ms = 600000", "cost_ms = 200", 1), "chains = 2", "chains = 2\nburn_in = 10\nsamples = 10", 1)
	os.WriteFile(filepath.Join(dir, "study.toml"), []byte(study), 0o644)
	os.WriteFile(filepath.Join(dir, "d.csv"), []byte("x,y\n1,2\n"), 0o644)
	out := filepath.Join(dir, "out")
	if code, _, e := kinfer(t, "run", filepath.Join(dir, "study.toml"), "-o", out, "--no-report"); code != 0 {
		t.Fatal(e)
	}
	tmp := t.TempDir()
	p := startKinfer(t, []string{"TMPDIR=" + tmp}, "run", "--verify", out)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if m, _ := filepath.Glob(filepath.Join(tmp, "kinfer-verify-*", "run.json")); len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no re-run within 20 s\n%s", p.stderr.all.String())
		}
	}
	time.Sleep(300 * time.Millisecond)
	if _, code := p.signalAndWait(t, syscall.SIGINT); code <= 0 {
		t.Fatalf("exit %d\n%s", code, p.stderr.all.String())
	}
	if e := p.stderr.all.String(); !strings.Contains(e, "--verify: interrupted") {
		t.Errorf("stderr:\n%s", e)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in the temporary directory: %v", left)
	}
}

// A run started under nohup keeps SIGHUP ignored: the session closing
// does not stop it (review 19: asking for SIGHUP undid nohup's ignore).
func TestNohupKeepsRunning(t *testing.T) {
	nohup, err := exec.LookPath("nohup")
	if err != nil {
		t.Skip("no nohup")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	os.WriteFile(filepath.Join(dir, "force_length.csv"), mustRead(t, "../../examples/quickstart/force_length.csv"), 0o644)
	os.WriteFile(filepath.Join(dir, "study.toml"), []byte(strings.Replace(string(mustRead(t, "../../examples/quickstart/study.toml")), "samples = 5000", "samples = 60000", 1)), 0o644)
	cmd := exec.Command(nohup, kinferBin, "run", filepath.Join(dir, "study.toml"), "-o", out, "--no-report", "--workers", "1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // loaded and running (the run takes about 1.5 s)
	cmd.Process.Signal(syscall.SIGHUP)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the run under nohup stopped on SIGHUP: %v\n%s", err, stderr.String())
	}
	if s := readSummary(t, out); !s.Complete {
		t.Errorf("summary.json not complete")
	}
}
