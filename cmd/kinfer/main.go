package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	kinfersdk "github.com/kinfer/kinfer"
	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin"
	"github.com/kinfer/kinfer/builtin/models/surrogate"
	"github.com/kinfer/kinfer/host/analyze"
	"github.com/kinfer/kinfer/host/build"
	"github.com/kinfer/kinfer/host/dataset"
	"github.com/kinfer/kinfer/host/manifest"
	"github.com/kinfer/kinfer/host/remote"
	"github.com/kinfer/kinfer/host/run"
	"github.com/kinfer/kinfer/host/safefile"
	"github.com/kinfer/kinfer/host/study"
	"github.com/kinfer/kinfer/host/target"
	"github.com/kinfer/kinfer/host/tomlx"
	"github.com/kinfer/kinfer/host/wasm"
	"github.com/kinfer/kinfer/internal/guesttext"
	"github.com/kinfer/kinfer/internal/plainfloat"
	"github.com/kinfer/kinfer/internal/sigfig"
)

const usage = `kinfer — identify biomechanical model parameters from measured data

usage:
  kinfer run STUDY.toml [-o DIR] [--seed N] [--workers N] [--verbose] [--checkpoint-every 30s] [--memory-budget 8GiB] [--no-report]
            (a study with stages = [...] runs its stages in order; run it again to continue)
            [--nats URL]  (evaluate on the workers of a NATS server: docs/DISTRIBUTED.md)
  kinfer run --resume DIR [--workers N]
  kinfer run --verify DIR [--workers N]
  kinfer analyze RUN_DIR [--workers N] [--predictive N] [--truth FILE] [--memory-budget 8GiB]
  kinfer report RUN_DIR [-o FILE] [--figures DIR]   (report.html: figures, diagnostics, provenance; kinfer run writes it)
  kinfer design STUDY.toml [-o DIR] [--design sobol] [--n N] [--space box|prior] [--seed N] [--workers N] [--resume]
  kinfer train DESIGN_DIR [DIR...] -o FILE [--validation DIR | --holdout 0.1] [--hidden 256,512,...] [--members 6] [--epochs N] [--seed N]
  kinfer train DESIGN_DIR -o FILE --kind kriging [--regression 0|1|2] [--corr gaussian|exponential|matern32|matern52] [--nugget L | --estimate-nugget]
  kinfer train ... --members 6 --member K -o MEMBER_K.json   (one network of the ensemble: one per process or machine)
  kinfer combine MEMBER_1.json ... MEMBER_6.json --validation DIR -o FILE   (the ensemble one training would have written)
  kinfer score SURROGATE.json DESIGN_DIR [DIR...]   (its errors on held-out design runs)
  kinfer worker --nats URL [--workers N] [--cache DIR]
  kinfer validate STUDY.toml|PLUGIN.toml
  kinfer inspect PLUGIN.toml|FILE.wasm|SURROGATE.json
  kinfer list
  kinfer build PLUGIN_DIR              (Go, C, Rust or AssemblyScript, in any folder: the guest SDKs are carried in kinfer)
  kinfer build --print-header          (the C header kinfer.h)
  kinfer build --print-sdk LANG        (an SDK's sources: c, go, rust, assemblyscript)
  kinfer new model|likelihood|method NAME [--lang go|c|rust|assemblyscript]
                                       (a plugin folder that builds, a study that runs it, test.sh)
  kinfer version

kinfer CMD --help lists a command's flags.
`

func main() {
	os.Exit(cli(os.Args[1:], os.Stdout, os.Stderr))
}

// cli runs one command and returns the exit code: 0 success, 1 failure,
// 2 usage error.
func cli(args []string, stdout, stderr io.Writer) int {
	// Standard output quotes paths and names from records and the
	// command line: no terminal escape passes (guesttext.Writer; audit 11).
	stdout = guesttext.Writer{W: stdout}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmd, rest := args[0], args[1:]
	var err error
	switch cmd {
	case "run":
		err = cmdRun(rest, stdout, stderr)
	case "worker":
		err = cmdWorker(rest, stdout, stderr)
	case "validate":
		err = cmdValidate(rest, stdout)
	case "inspect":
		err = cmdInspect(rest, stdout, stderr)
	case "analyze":
		err = cmdAnalyze(rest, stdout)
	case "design":
		err = cmdDesign(rest, stdout)
	case "train":
		err = cmdTrain(rest, stdout)
	case "combine":
		err = cmdCombine(rest, stdout)
	case "score":
		err = cmdScore(rest, stdout)
	case "report":
		err = cmdReport(rest, stdout)
	case "list":
		if _, err = parse(flag.NewFlagSet("list", flag.ContinueOnError), rest, 0); err == nil {
			err = cmdList(stdout)
		}
	case "build":
		err = cmdBuild(rest, stdout, stderr)
	case "new":
		err = cmdNew(rest, stdout)
	case "version":
		if _, err = parse(flag.NewFlagSet("version", flag.ContinueOnError), rest, 0); err != nil {
			break
		}
		b := run.BuildInfo()
		fmt.Fprintf(stdout, "kinfer %s (ABI %d, %s, revision %s, modified %s, wazero %s, %s)\n",
			run.Version, abi.Version, b.Go, b.VCSRevision, b.VCSModified, b.Wazero, b.Platform)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "kinfer: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	var he helpError
	if errors.As(err, &he) {
		fmt.Fprint(stdout, he.text)
		return 0
	}
	var ue usageError
	if errors.As(err, &ue) {
		// The command's own synopsis, not all of kinfer's (30 lines
		// after a one-line mistake: audit 4).
		if h, ok := commandHelp[cmd]; ok {
			fmt.Fprintf(stderr, "kinfer %s: %s\n\nusage: %s\n(kinfer %s --help lists its flags)\n", cmd, guesttext.EscapeLines(err.Error()), h[0], cmd)
			return 2
		}
		fmt.Fprintf(stderr, "kinfer %s: %s\n\n%s", cmd, guesttext.EscapeLines(err.Error()), usage)
		return 2
	}
	if err != nil {
		// Messages quote paths and values from studies and manifests.
		fmt.Fprintf(stderr, "kinfer %s: %s\n", cmd, guesttext.EscapeLines(err.Error()))
		return 1
	}
	return 0
}

// commandHelp is each command's synopsis and what it does, printed by
// kinfer CMD --help above its flags.
var commandHelp = map[string][2]string{
	"run": {"kinfer run STUDY.toml [flags] | kinfer run --resume DIR | kinfer run --verify DIR",
		"Runs a study's method and writes summary.json, samples.csv and report.html into the output\ndirectory (docs/OUTPUTS.md). A study with stages = [...] runs its stages in order."},
	"validate": {"kinfer validate STUDY.toml|PLUGIN.toml",
		"Loads a study (every component, dataset and prior) or a plugin and says what it found, without running anything."},
	"new": {"kinfer new model|likelihood|method NAME [--lang go|c|rust|assemblyscript] [--dir DIR]",
		"Writes a plugin folder that builds with kinfer build, with a study that runs it and a test."},
	"inspect": {"kinfer inspect PLUGIN.toml|FILE.wasm [--certify ...]",
		"Prints a plugin's spec: parameters, conditions, outputs, settings, capabilities, imports and exports."},
	"analyze": {"kinfer analyze RUN_DIR [flags]",
		"Writes RUN_DIR/analysis.json: parameter spreads, the posterior-predictive fit, TMCMC stage changes,\nand with --truth the check against known values (docs/OUTPUTS.md)."},
	"train": {"kinfer train DESIGN_DIR [MORE_DESIGN_DIRS...] -o FILE [flags]",
		"Fits a surrogate to a design run of kinfer design: a neural-network ensemble (Bartsoen et al. 2023) or,\nwith --kind kriging, one DACE Kriging predictor per output. Several design runs of the same model (a\ndesign and its refinements) are trained on together. Writes FILE with its provenance and FILE's stem +\n.report.json with the validation errors (nMAE, MAE, 90 % AE per output)."},
	"combine": {"kinfer combine MEMBER.json [MORE_MEMBERS.json...] --validation DIR -o FILE",
		"Joins the networks of one ensemble trained one at a time (kinfer train --members N --member K, for\nexample one per process or machine) into the ensemble file a single training with --members N would have\nwritten, bit for bit, and validates it on the validation design the members were validated on."},
	"score": {"kinfer score SURROGATE.json DESIGN_DIR [MORE_DESIGN_DIRS...] [--json]",
		"Measures a surrogate file (kinfer train) on design runs of its model that it was not trained on: nMAE,\nMAE and 90 % AE per output, as in its validation report, on held-out data (a design it was trained on\nis refused), and counts the samples outside its training box (scored by extrapolation)."},
	"worker": {"kinfer worker --nats URL [flags]",
		"Evaluates models for runs started with kinfer run --nats URL, through a NATS JetStream server\n(docs/DISTRIBUTED.md), until interrupted."},
	"design": {"kinfer design STUDY.toml [flags]",
		"Evaluates the study's model over a design of experiments into design.csv and design.json (a surrogate's training set)."},
	"report": {"kinfer report RUN_DIR [-o FILE] [--figures DIR]",
		"Writes one self-contained report.html of a run: the study, provenance, diagnostics and every figure that\napplies to its method (posterior histograms with priors, corner plot, TMCMC stages, traces, loss curves,\nmodel fit). kinfer run writes it at the end of every run unless --no-report."},
	"list": {"kinfer list", "Lists the builtin models, likelihoods and methods with their parameters and settings."},
	"build": {"kinfer build PLUGIN_DIR | kinfer build --print-header | kinfer build --print-sdk LANG",
		"Builds a Go, C, Rust or AssemblyScript plugin folder into the module its plugin.toml names (key wasm)\nand writes the module's sha256 into plugin.toml."},
	"version": {"kinfer version", "Prints kinfer's version, ABI version, Go toolchain, VCS revision, wazero version and platform."},
}

type usageError struct{ error }

// helpError carries a command's flag descriptions, asked for by -h/--help.
type helpError struct{ text string }

func (h helpError) Error() string { return "help requested" }

// parse parses flags that may come before or after the positional
// arguments (flag.FlagSet alone stops at the first positional).
func parse(fs *flag.FlagSet, args []string, npos int) ([]string, error) {
	fs.SetOutput(io.Discard)
	// A flag of one value given twice: the flag package keeps the last
	// and drops the first without a word (audit 14: run -o A -o B).
	seen := map[string]bool{}
	for _, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		if _, repeatable := f.Value.(settingFlags); repeatable {
			continue
		}
		if seen[name] {
			return nil, usageError{fmt.Errorf("flag -%s is given twice: give it once", name)}
		}
		seen[name] = true
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				var b strings.Builder
				if h, ok := commandHelp[fs.Name()]; ok {
					fmt.Fprintf(&b, "usage: %s\n\n%s\n\n", h[0], h[1])
				} else {
					fmt.Fprintf(&b, "usage of kinfer %s:\n", fs.Name())
				}
				n := 0
				fs.VisitAll(func(*flag.Flag) { n++ })
				if n == 0 {
					fmt.Fprintf(&b, "kinfer %s takes no flags.\n", fs.Name())
					return nil, helpError{b.String()}
				}
				fmt.Fprintf(&b, "flags (they may come before or after the arguments):\n")
				fs.SetOutput(&b)
				fs.PrintDefaults()
				return nil, helpError{b.String()}
			}
			return nil, usageError{err}
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if npos >= 0 && len(pos) != npos {
		return nil, usageError{fmt.Errorf("want %d argument(s), got %d", npos, len(pos))}
	}
	return pos, nil
}

// newRuntime creates the plugin runtime. KINFER_CACHE_DIR sets wazero's
// compilation cache directory ("-": no disk cache; default: the user cache
// directory, see wasm.Options.CacheDir).
func newRuntime(ctx context.Context, log io.Writer) (*wasm.Runtime, error) {
	return wasm.NewRuntime(ctx, wasm.Options{Log: log, CacheDir: os.Getenv("KINFER_CACHE_DIR")})
}

// printSummary prints the run's summary; byError says the run ended on an
// error, not by completing or by a signal.
func printSummary(w io.Writer, s *run.Summary, dir string, byError bool) {
	state := s.Status()
	on := fmt.Sprintf("%d workers", s.Workers)
	if r, ok := s.Remote.(remote.RunSummary); ok {
		on = fmt.Sprintf("%d remote workers in %d processes (%s)", r.Workers, r.Processes, r.Server)
	}
	fmt.Fprintf(w, "%s: %s — %d evaluations (%d failed) in %.2fs on %s, %d samples\n",
		s.Study, state, s.Evaluations, s.FailedEvaluations, float64(s.WallSeconds), on, s.Samples)
	// Which component gave the non-finite values (audit 15: a likelihood
	// plugin's NaN read as the model's or the prior's problem).
	if len(s.NonFiniteFrom) > 0 {
		srcs := make([]string, 0, len(s.NonFiniteFrom))
		for k, n := range s.NonFiniteFrom {
			srcs = append(srcs, fmt.Sprintf("%d from %s", n, k))
		}
		slices.Sort(srcs)
		fmt.Fprintf(w, "non-finite values (NaN or +Inf): %s\n", strings.Join(srcs, ", "))
	}
	switch {
	case s.Samples == 0 && !s.Complete && strings.HasPrefix(state, "FAILED"):
		fmt.Fprintf(w, "no samples: every evaluation failed (the reason follows)\n")
	case s.Samples == 0 && !s.Complete:
		fmt.Fprintf(w, "no samples: the run stopped before its method produced any, so there is nothing to summarise\n")
	case s.Samples == 0:
		fmt.Fprintf(w, "no samples\n")
	default:
		fmt.Fprintf(w, "%-16s %14s %14s %14s %14s %14s\n", "param", "mean", "sd", "p05", "p50", "p95")
		ses, ofTheta := run.ThetaStandardErrors(s.MethodReport, s.Transform)
		for _, p := range s.Params {
			// Locations with the digits that resolve the sd, or an
			// optimiser's standard error when larger (sigfig).
			res := run.Resolution(p.Name, float64(p.SD), ses, ofTheta)
			loc := func(v run.F) string { return numN(v, sigfig.Digits(6, res, float64(v))) }
			fmt.Fprintf(w, "%-16s %14s %14s %14s %14s %14s\n", p.Name, loc(p.Mean), num6(p.SD), loc(p.P05), loc(p.P50), loc(p.P95))
		}
		if s.Samples == 1 {
			fmt.Fprintf(w, "(one sample: no spread; an optimiser writes its final point per start)\n")
		}
		if se := standardErrors(s.MethodReport, s.Transform); se != "" {
			fmt.Fprintf(w, "standard errors of the best start: %s\n", se)
			if s.Samples > 1 {
				fmt.Fprintf(w, "(the table's sd is the spread of the starts' final points, not an uncertainty)\n")
			}
		}
	}
	for _, l := range quantityLines(s.MethodReport) {
		fmt.Fprintln(w, l)
	}
	if l := evidenceLine(s.MethodReport); l != "" {
		fmt.Fprintln(w, l)
	}
	// Only the files there (a full disk leaves some unwritten).
	var outs []string
	for _, f := range []string{"summary.json", "samples.csv", run.ParquetFile} {
		if fi, err := os.Lstat(filepath.Join(dir, f)); err == nil && fi.Mode().IsRegular() {
			outs = append(outs, filepath.Join(dir, f))
		}
	}
	if len(outs) > 0 {
		fmt.Fprintf(w, "outputs: %s\n", strings.Join(outs, ", "))
	} else {
		fmt.Fprintf(w, "outputs: none written to %s\n", dir)
	}
	// A run stopped by an error (a plugin's trap, a refusal) rather than
	// by a signal: the method's notes on its partial result ("run
	// longer") are not advice, and the error follows (author 22).
	// Decided by the caller from the run's context (review 23: an
	// error's text does not tell a signal's stop from a fault).
	byError = byError && !s.Complete
	heldBack := 0
	for _, wn := range s.Warnings() {
		switch wn.About {
		case "":
			fmt.Fprintf(w, "WARNING: %s\n", wn.Text)
		case "method " + s.Method:
			if byError {
				heldBack++
				continue
			}
			fmt.Fprintf(w, "WARNING (%s): %s\n", wn.About, guesttext.Escape(wn.Text))
		default:
			fmt.Fprintf(w, "WARNING (%s): %s\n", wn.About, wn.Text)
		}
	}
	if heldBack > 0 {
		fmt.Fprintf(w, "the run stopped on the error below; the method's %d note(s) on its partial result are in summary.json (method_report.warnings)\n", heldBack)
	}
	for _, c := range s.Certified {
		name, _, _ := strings.Cut(c, ":")
		fmt.Fprintf(w, "certified: %s (summary.json certified lists the checks)\n", guesttext.Escape(name))
	}
}

// evidenceLine is "log evidence −32.414 ± 0.048 (5 stages)" for a method
// report with a finite log_evidence (tmcmc, or a plugin reporting one),
// the number such a run is for (model comparison); "" otherwise.
func evidenceLine(report any) string {
	m, ok := report.(map[string]any)
	if !ok {
		m = asJSONObject(report)
	}
	z, ok := m["log_evidence"].(float64)
	if !ok || math.IsNaN(z) || math.IsInf(z, 0) {
		return ""
	}
	l := "log evidence " + strconv.FormatFloat(z, 'f', 3, 64)
	if se, ok := m["log_evidence_se"].(float64); ok && !math.IsNaN(se) && !math.IsInf(se, 0) {
		l += " ± " + strconv.FormatFloat(se, 'f', 3, 64)
	}
	if st, ok := m["stages"].([]any); ok {
		l += fmt.Sprintf(" (%d stages)", len(st))
	}
	return l
}

// quantityLines state a propagation run's result, the quantity of
// interest (method_report.montecarlo of kinfer's montecarlo or a
// propagation plugin reporting the same block): its mean, sd, 5th, 50th
// and 95th percentiles, and whether the stopping rule held. None for
// another method. The table above it is of the prior draws.
func quantityLines(report any) []string {
	m, ok := report.(map[string]any)
	if !ok {
		m = asJSONObject(report)
	}
	mc, ok := m["montecarlo"].(map[string]any)
	if !ok && m["montecarlo"] != nil {
		mc, ok = asJSONObject(m["montecarlo"]), true
	}
	if !ok || mc == nil {
		return nil
	}
	f := func(v any) string {
		switch x := v.(type) {
		case float64:
			return num6(run.F(x))
		case int:
			return strconv.Itoa(x) // a count in a report not (yet) decoded from JSON
		case run.F:
			return num6(x)
		}
		if x := asJSONNumber(v); x != "" {
			return x
		}
		return "-"
	}
	name := "quantity of interest"
	if q, ok := mc["quantity"].(string); ok && q != "" {
		name += " " + guesttext.Escape(q)
	}
	if c, ok := mc["condition"].(float64); ok {
		name += fmt.Sprintf(" (condition row %g)", c)
	}
	pct, _ := mc["percentiles"].(map[string]any)
	conv := "-"
	if b, ok := mc["converged"].(bool); ok {
		conv = fmt.Sprint(b)
	}
	return []string{
		fmt.Sprintf("%s: mean %s, sd %s, p5 %s, p50 %s, p95 %s", name, f(mc["mean"]), f(mc["sd"]), f(pct["p5"]), f(pct["p50"]), f(pct["p95"])),
		fmt.Sprintf("  (%s values, %s failed draws; converged: %s; the table above is of the prior draws)", f(mc["n"]), f(mc["failed"]), conv),
	}
}

// asJSONObject is v as summary.json holds it, decoded (a run's own
// summary holds the method's Go values, e.g. montecarlo.Summary); nil
// when v is not a JSON object.
func asJSONObject(v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

// standardErrors is "a 0.0123, b 0.456" (six a line) from a least-squares report's
// statistics (with the parameters on a bound marked), or "".
//
// With a [transform] the method's statistics are of x: the standard errors
// of θ by the delta method (summary.json's transform.standard_errors_theta)
// are shown instead, said so; without them the x ones are labelled.
func standardErrors(report any, tr *run.TransformSummary) string {
	ses, ofTheta := run.ThetaStandardErrors(report, tr)
	if len(ses) == 0 {
		return ""
	}
	suffix := ""
	if tr != nil {
		if ofTheta {
			suffix = " (of θ, carried from the method's x through [transform] by the delta method)"
		} else {
			suffix = " (of x, the coordinates the method explored through [transform], not of θ)"
		}
	}
	parts := make([]string, len(ses))
	for i, e := range ses {
		parts[i] = e.Name + " " + strconv.FormatFloat(e.Value, 'g', 4, 64)
		if math.IsNaN(e.Value) || math.IsInf(e.Value, 0) {
			parts[i] = e.Name + " -"
		}
		if e.AtBound {
			parts[i] += " (on a bound)"
		}
	}
	// Six a line: a foot-contact stage's 300 made one line of 9 000
	// characters (docs 24).
	var b strings.Builder
	for i, p := range parts {
		switch {
		case i == 0:
		case i%6 == 0:
			b.WriteString(",\n  ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(p)
	}
	return b.String() + suffix
}

// num6 formats a summary number for the terminal table: "-" for a value
// that is not finite (an sd of one sample), never "NaN".
func num6(f run.F) string { return numN(f, 6) }

// numN is f with n significant digits, "-" when not finite.
func numN(f run.F, n int) string {
	x := float64(f)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	return sigfig.G(x, n)
}

// isManifest tells a plugin.toml from a study by its top-level keys.
func isManifest(path string) bool {
	// Only a regular file of a TOML file's size is looked at: a FIFO or a
	// device named on the command line must not hang or exhaust kinfer.
	b, err := safefile.ReadFile(path, tomlx.MaxBytes)
	if err != nil {
		return filepath.Base(path) == "plugin.toml"
	}
	for _, ln := range strings.Split(string(b), "\n") {
		ln = strings.TrimSpace(ln)
		if strings.HasPrefix(ln, "[") {
			return false
		}
		if strings.HasPrefix(ln, "abi") && strings.Contains(ln, "=") {
			return true
		}
	}
	return filepath.Base(path) == "plugin.toml"
}

// oneArgWithRuntime parses a command that takes one path and no flags and
// runs f with a plugin runtime (closed afterwards).
func oneArgWithRuntime(name string, args []string, f func(ctx context.Context, rt *wasm.Runtime, path string) error) error {
	return withRuntime(flag.NewFlagSet(name, flag.ContinueOnError), args, nil, nil, f)
}

// withRuntime parses a command's flags (fs) and its one path and runs f
// with a plugin runtime (closed afterwards).
func withRuntime(fs *flag.FlagSet, args []string, verbose *bool, stderr io.Writer, f func(ctx context.Context, rt *wasm.Runtime, path string) error) error {
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	// A path is printed in messages: one with a line feed forged output
	// lines ("certified: …", audit 20).
	if !guesttext.Clean(pos[0]) {
		return usageError{fmt.Errorf("%s: the path has a control character, a line or paragraph separator, a bidirectional control or invalid UTF-8: rename the file or its folder", guesttext.Escape(pos[0]))}
	}
	ctx := context.Background()
	var plog io.Writer // plugin log lines (ABI.md §7), with --verbose
	if verbose != nil && *verbose {
		plog = stderr
	}
	rt, err := newRuntime(ctx, plog)
	if err != nil {
		return err
	}
	defer rt.Close(ctx)
	return f(ctx, rt, pos[0])
}

func cmdValidate(args []string, stdout io.Writer) error {
	return oneArgWithRuntime("validate", args, func(ctx context.Context, rt *wasm.Runtime, path string) error {
		return validate(ctx, rt, path, stdout)
	})
}

func validate(ctx context.Context, rt *wasm.Runtime, path string, stdout io.Writer) error {
	if isModule(path) {
		return fmt.Errorf("%s is a WebAssembly module, not a study or a plugin.toml: kinfer inspect %s prints what it is (add --certify to check that its results are deterministic); kinfer validate takes the plugin.toml beside it", path, path)
	}
	if isManifest(path) {
		p, err := loadPlugin(ctx, rt, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "ok: plugin %s %s (%s, ABI %d, %d exports)\n", p.Manifest.Name, p.Manifest.Version, p.Spec.Kind, abi.Version, len(p.Exports))
		for _, n := range p.Notes {
			fmt.Fprintf(stdout, "note: %s\n", guesttext.Escape(n))
		}
		if why := p.Manifest.Limits.NeedsTrust(); len(why) > 0 {
			fmt.Fprintf(stdout, "note: its limits ask for %s, which a study refuses unless its table for the plugin says trusted = true\n", strings.Join(why, " and "))
		}
		return nil
	}
	if sf, d, err := study.Decode(path); err == nil {
		if multi, err := sf.IsMultiStage(d); err != nil {
			return err
		} else if multi {
			return validateStages(ctx, rt, path, sf, stdout)
		}
	}
	return validateStudy(ctx, rt, path, nil, stdout)
}

// validateStages loads every stage of a multi-stage study in order, each
// with the parameters of the stages before it as its inherited values
// (their defaults and fixed values: no stage is run).
func validateStages(ctx context.Context, rt *wasm.Runtime, path string, sf *study.File, stdout io.Writer) error {
	var prev map[string]float64
	for i, st := range sf.Stages {
		p := st
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(path), st)
		}
		fmt.Fprintf(stdout, "stage %d: ", i+1)
		s, err := study.Load(ctx, p, study.Options{Workers: 1, Runtime: rt, Previous: prev, PreviousGuessed: prev != nil, MemoryBudget: run.DefaultMemoryBudget()})
		if err != nil {
			return fmt.Errorf("stage %d (%s): %w", i+1, st, err)
		}
		note, err := runChecks(s)
		if err != nil {
			s.Close()
			return fmt.Errorf("stage %d (%s): %w", i+1, st, err)
		}
		printValid(s, stdout)
		fmt.Fprint(stdout, note)
		next := map[string]float64{}
		for j, q := range s.ModelInfo.Spec.Params {
			next[q.Name] = s.Base[j]
		}
		s.Close()
		prev = next
	}
	fmt.Fprintf(stdout, "ok: multi-stage study %s: %d stages\n", sf.Name, len(sf.Stages))
	return nil
}

func validateStudy(ctx context.Context, rt *wasm.Runtime, path string, prev map[string]float64, stdout io.Writer) error {
	s, err := study.Load(ctx, path, study.Options{Workers: 1, Runtime: rt, Previous: prev, MemoryBudget: run.DefaultMemoryBudget()})
	if err != nil {
		return err
	}
	defer s.Close()
	note, err := runChecks(s)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	printValid(s, stdout)
	fmt.Fprint(stdout, note)
	return nil
}

// runChecks is what kinfer run refuses of a loaded study before any
// evaluation: its preflight (the plugins' memory, here for one worker; a
// run charges one instance per worker) and what the method's Init refuses
// (annealing's unbounded box, settings beyond the memory budget). A study
// whose likelihood terms observe nothing gets a note instead.
func runChecks(s *study.Study) (note string, err error) {
	if err := run.Preflight(s, 0); errors.Is(err, run.ErrNoObservations) {
		note = "note: its likelihood terms observe nothing, so kinfer run refuses it; kinfer design takes its data files for their condition rows\n"
	} else if err != nil {
		return "", err
	}
	return note, run.InitMethod(s, target.New(s, 1), 0)
}

func printValid(s *study.Study, stdout io.Writer) {
	rows := 0
	for _, d := range s.Data {
		rows += d.K
	}
	extra := ""
	if n := len(s.Base) - len(s.Free); n > 0 {
		extra += fmt.Sprintf(" (%d fixed)", n)
	}
	if s.Transformed() {
		n := 0
		for _, tr := range s.Transforms {
			n += len(tr.Idx)
		}
		extra += fmt.Sprintf(", %d reparameterised by [transform]", n)
	}
	if len(s.Starts) > 0 {
		extra += fmt.Sprintf(", %d initial point(s) from init", len(s.Starts))
	}
	if n := len(s.Inherited); n > 0 {
		extra += fmt.Sprintf(", %d inherited from the previous stage", n)
	}
	fmt.Fprintf(stdout, "ok: study %s: model %s, %d free parameter(s)%s, %d dataset(s) with %d rows, %d likelihood term(s), method %s\n",
		s.Name, s.ModelInfo.Ref, len(s.Free), extra, len(s.Data), rows, len(s.Terms), s.MethodInfo.Ref)
	for _, w := range s.PriorWarnings {
		fmt.Fprintf(stdout, "note: %s\n", w)
	}
}

// isModule tells a WebAssembly module (a .wasm name, or the \0asm magic)
// from a TOML file named on the command line.
func isModule(path string) bool {
	if strings.HasSuffix(strings.ToLower(path), ".wasm") {
		return true
	}
	f, err := safefile.Open(path, manifest.MaxModuleBytes)
	if err != nil {
		return false
	}
	defer f.Close()
	magic := make([]byte, 4)
	n, _ := io.ReadFull(f, magic)
	return n == 4 && string(magic) == "\x00asm"
}

// bareLimits are the limits of a module loaded without its plugin.toml
// (kinfer inspect FILE.wasm): those of a plugin.toml without [limits], so
// that a module just received runs no longer than its manifest would let
// it (ABI.md §9), never unlimited.
var bareLimits = manifest.Limits{MemoryMiB: manifest.DefaultMemoryMiB, TimeoutMS: manifest.DefaultTimeoutMS, Fuel: manifest.DefaultFuel}

func loadPlugin(ctx context.Context, rt *wasm.Runtime, path string) (*wasm.Plugin, error) {
	var m *manifest.Manifest
	if isModule(path) {
		// A module named on the command line is the file the user chose,
		// through a symbolic link or not; it must exist and be a regular
		// file of a module's size, said of the file itself (audit 8: a
		// missing one was answered as a manifest's wasm key, "build it
		// with kinfer build .").
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, errors.Unwrap(err))
		}
		f, err := safefile.Open(real, manifest.MaxModuleBytes)
		if err != nil {
			if real != path {
				return nil, fmt.Errorf("%s (through a symbolic link): %w", path, err)
			}
			return nil, err
		}
		f.Close()
		base := filepath.Base(real)
		m = &manifest.Manifest{Name: strings.TrimSuffix(base, filepath.Ext(base)), ABI: abi.Version,
			Wasm: base, Path: path, Dir: filepath.Dir(real), Limits: bareLimits, Bare: true}
	} else {
		var err error
		if m, err = manifest.Load(path); err != nil {
			return nil, err
		}
	}
	return rt.Load(ctx, m)
}

// settingFlags collects repeated --set name=value flags.
// settingFlags are --set name=value pairs: a number, or for a setting
// with choices the choice's name as a study gives it (resolved against
// the spec by values).
type settingFlags map[string]string

func (s settingFlags) String() string { return fmt.Sprint(map[string]string(s)) }

func (s settingFlags) Set(v string) error {
	name, val, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want name=value, got %q", v)
	}
	s[name] = val
	return nil
}

// values resolves the pairs against settings: a choice by its name (or
// index), anything else as a number.
func (s settingFlags) values(settings []abi.Setting) (map[string]float64, error) {
	out := map[string]float64{}
	for name, val := range s {
		i := slices.IndexFunc(settings, func(st abi.Setting) bool { return st.Name == name })
		if i >= 0 && len(settings[i].Choices) > 0 {
			// A choice by its name, as a study gives it (a choice named
			// "20" is that choice, not index 20).
			k := slices.Index(settings[i].Choices, val)
			if k < 0 {
				return nil, fmt.Errorf("setting %s: %q is not one of %q", name, val, settings[i].Choices)
			}
			out[name] = float64(k)
			continue
		}
		f, err := plainfloat.Parse(val)
		if err != nil {
			return nil, fmt.Errorf("setting %s: %q is not a number", name, val)
		}
		// ABI.md §4: a plugin never gets a non-finite setting (audit 10:
		// --set scale=inf reached kinfer_configure).
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("setting %s: %q: a setting must be finite, as in a study", name, val)
		}
		out[name] = f
	}
	return out, nil
}

func cmdInspect(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	certify := fs.Bool("certify", false, "evaluate the same points on two fresh instances, in different orders and batch sizes, and fail if any result differs (a plugin whose results depend on call history or scheduling)")
	data := fs.String("data", "", "with --certify: a CSV whose condition columns (named as the model's conditions) are the conditions to evaluate at, its row count K for a model without conditions (default: a grid 1..5 in every column, 5 rows)")
	points := fs.Int("points", 12, "with --certify: points to evaluate (batches for a method)")
	outputs := fs.Int("outputs", 2, "with --certify: output columns a likelihood sees, or a propagation method reads (named y1, y2, …, at 5 condition rows)")
	sets := settingFlags{}
	fs.Var(sets, "set", "with --certify: a setting of the component, name=value (repeatable; a choice by its name); unset settings take their defaults")
	verbose := fs.Bool("verbose", false, "show the plugin's log lines (kinfer_v1.log, standard output and error) on standard error, prefixed by its name, as kinfer run --verbose does")
	return withRuntime(fs, args, verbose, stderr, func(ctx context.Context, rt *wasm.Runtime, path string) error {
		// Bounded: 10^8 points took 10 GB before any output.
		if *points < 1 || *points > maxCertifyPoints {
			return usageError{fmt.Errorf("--points must be in [1, %d], got %d", maxCertifyPoints, *points)}
		}
		if *outputs < 1 || *outputs > maxCertifyOutputs {
			return usageError{fmt.Errorf("--outputs must be in [1, %d], got %d", maxCertifyOutputs, *outputs)}
		}
		if strings.HasSuffix(strings.ToLower(path), ".json") {
			return inspectSurrogate(stdout, path)
		}
		p, err := loadPlugin(ctx, rt, path)
		if err != nil {
			return err
		}
		inspect(stdout, p)
		if !*certify {
			return nil
		}
		return certifyPlugin(ctx, stdout, p, *data, *points, *outputs, sets)
	})
}

// certifyRows is the number of condition rows a propagation method is
// certified with.
const certifyRows = 5

// Bounds of kinfer inspect --certify's --points and --outputs.
const (
	maxCertifyPoints  = 10_000
	maxCertifyOutputs = 1_000
)

// certifyPlugin runs Plugin.Certify with the command line's options and
// prints what it checked.
func certifyPlugin(ctx context.Context, stdout io.Writer, p *wasm.Plugin, data string, points, outputs int, sets settingFlags) error {
	var err error
	o := wasm.CertifyOptions{Points: points, Outputs: outputs, Seed: 1}
	given, err := sets.values(p.Spec.Settings)
	if err != nil {
		return fmt.Errorf("--set: %w", err)
	}
	if o.Settings, err = abi.SettingValues(p.Spec.Settings, given); err != nil {
		return fmt.Errorf("--set: %w", err)
	}
	if data != "" {
		// The conditions of a model; a likelihood or a method has none
		// (audit 10: --data was ignored for them without a word).
		if p.Spec.Kind != abi.KindModel {
			return usageError{fmt.Errorf("--data gives a model's conditions; %s is a %s (its points are synthetic: --points, --outputs, --set)", p.Manifest.Name, p.Spec.Kind)}
		}
		if o.X, o.Rows, err = conditionsFrom(data, p.Spec); err != nil {
			return err
		}
	}
	// A propagation method reads --outputs output columns (y1, y2, …) at
	// certifyRows condition rows, so that settings naming an output or a
	// row past the first can be certified (audit 10: m = rows = 1 only).
	if p.Spec.Kind == abi.KindMethod && p.Spec.Has(abi.CapPropagation) {
		for j := range outputs {
			o.OutputNames = append(o.OutputNames, fmt.Sprintf("y%d", j+1))
		}
		o.OutputRows = certifyRows
	}
	// A method's save and load are checked between its second ask and
	// its tell: one batch cannot (audit 10: skipped without a word).
	if p.Spec.Kind == abi.KindMethod && p.Spec.Has(abi.CapCheckpoint) && points < 2 {
		return usageError{fmt.Errorf("--points %d: a method with checkpoint is saved and loaded between its second ask and its tell, so certify needs at least 2 batches", points)}
	}
	cert, err := p.Certify(ctx, o)
	if err != nil {
		return fmt.Errorf("certify: %w", err)
	}
	fmt.Fprintln(stdout, "certified:    deterministic")
	for _, c := range cert.Checks {
		fmt.Fprintf(stdout, "  %s\n", c)
	}
	return nil
}

// conditionsFrom reads a model's condition columns (by name) from a CSV,
// and the number of rows (a model without conditions is called with them).
func conditionsFrom(path string, spec abi.Spec) ([]float64, int, error) {
	t, err := dataset.Read(path)
	if err != nil {
		return nil, 0, err
	}
	c := len(spec.Conditions)
	idx := make([]int, c)
	for j, col := range spec.Conditions {
		if idx[j] = slices.Index(t.Columns, col.Name); idx[j] < 0 {
			return nil, 0, fmt.Errorf("%s: no column %s (the model's condition %d); columns: %s", path, col.Name, j+1, strings.Join(t.Columns, ", "))
		}
	}
	x := make([]float64, 0, len(t.Rows)*c)
	for r, row := range t.Rows {
		for j, i := range idx {
			// A study refuses a missing or infinite condition; so does
			// certify, before the plugin is blamed (audit 10).
			if math.IsNaN(row[i]) || math.IsInf(row[i], 0) {
				return nil, 0, t.Errorf(r, spec.Conditions[j].Name, "condition %g is not a number a model can be called at", row[i])
			}
			x = append(x, row[i])
		}
	}
	return x, len(t.Rows), nil
}

func inspect(stdout io.Writer, p *wasm.Plugin) {
	m := p.Manifest
	version := m.Version
	if version == "" {
		// A bare module has no manifest: its spec's version (author 22:
		// "plugin: spring " with none).
		version = p.Spec.Version
	}
	fmt.Fprintf(stdout, "plugin:       %s\n", strings.TrimSpace(m.Name+" "+version))
	fmt.Fprintf(stdout, "file:         %s\n", guesttext.Escape(m.WasmPath()))
	fmt.Fprintf(stdout, "ABI version:  %d\n", abi.Version)
	timeout := fmt.Sprintf("timeout %d ms", m.Limits.TimeoutMS)
	if m.Limits.TimeoutMS == 0 {
		timeout = "no timeout (timeout_ms = 0)"
	}
	fuel := fmt.Sprintf("fuel %d per call (per point of a batch)", m.Limits.Fuel)
	if m.Limits.Fuel == 0 {
		fuel = "unlimited fuel (fuel = 0)"
	}
	fmt.Fprintf(stdout, "limits:       memory %d MiB, %s, %s\n", m.Limits.MemoryMiB, timeout, fuel)
	if isModule(m.Path) {
		fmt.Fprintf(stdout, "              (a bare module: the defaults of a plugin.toml without [limits])\n")
	} else if why := m.Limits.NeedsTrust(); len(why) > 0 {
		fmt.Fprintf(stdout, "              a study must set trusted = true for this plugin: %s\n", strings.Join(why, ", "))
	}
	printSpec(stdout, p.Spec)
	fmt.Fprintf(stdout, "imports:      %s\n", strings.Join(p.Imports, ", "))
	fmt.Fprintf(stdout, "exports:      %s\n", strings.Join(p.Exports, ", "))
	for _, n := range p.Notes {
		fmt.Fprintf(stdout, "note:         %s\n", guesttext.Escape(n))
	}
}

func printSpec(w io.Writer, s abi.Spec) {
	fmt.Fprintf(w, "kind:         %s\n", s.Kind)
	fmt.Fprintf(w, "name:         %s %s\n", guesttext.Escape(s.Name), guesttext.Escape(s.Version))
	if s.Doc != "" {
		fmt.Fprintf(w, "doc:          %s\n", guesttext.Escape(s.Doc))
	}
	if len(s.Params) > 0 {
		fmt.Fprintln(w, "parameters:")
		for _, p := range s.Params {
			fmt.Fprintf(w, "  %-14s %-6s [%g, %g] default %g  %s\n", p.Name, unit(p.Unit), p.Lower, p.Upper, p.Default, guesttext.Escape(p.Doc))
		}
	}
	for _, list := range []struct {
		title string
		cols  []abi.Column
	}{{"conditions:", s.Conditions}, {"outputs:", s.Outputs}} {
		if len(list.cols) > 0 {
			fmt.Fprintln(w, list.title)
			for _, c := range list.cols {
				fmt.Fprintf(w, "  %-14s %-6s %s\n", c.Name, unit(c.Unit), guesttext.Escape(c.Doc))
			}
		}
	}
	if len(s.Settings) > 0 {
		fmt.Fprintln(w, "settings:")
		for _, st := range s.Settings {
			def := fmt.Sprintf("default %g", st.Default)
			if st.Required {
				def = "required"
			}
			if len(st.Choices) > 0 {
				def = fmt.Sprintf("one of %q, default %q", st.Choices, st.Choices[int(st.Default)])
			}
			if st.Output {
				def = "a model output's name, default none"
			}
			fmt.Fprintf(w, "  %-14s %-6s %s  %s\n", st.Name, unit(st.Unit), def, guesttext.Escape(st.Doc))
		}
	}
	caps := "none"
	if len(s.Capabilities) > 0 {
		caps = guesttext.Escape(strings.Join(s.Capabilities, ", "))
	}
	fmt.Fprintf(w, "capabilities: %s\n", caps)
}

func unit(u string) string {
	if u == "" {
		return "-"
	}
	return guesttext.Escape(u)
}

func cmdList(w io.Writer) error {
	section := func(title string, names []string, spec func(string) abi.Spec) {
		fmt.Fprintf(w, "%s\n", title)
		for _, n := range names {
			fmt.Fprintf(w, "\n== builtin:%s\n", n)
			printSpec(w, spec(n))
		}
		fmt.Fprintln(w)
	}
	section("MODELS", builtin.Names(builtin.Models), func(n string) abi.Spec { return builtin.Models[n].Spec })
	fmt.Fprintf(w, "== %s (a trained surrogate: [model] use = \"surrogate\", file = \"FILE.json\" from kinfer train, a network ensemble or Kriging predictors)\n", study.SurrogateUse)
	fmt.Fprintln(w, "  parameters, conditions and outputs: the source model's, from the file; bounds: the training design's box")
	fmt.Fprintln(w, "  optional keys: trained_on = \"MODEL\", sha256 = \"HEX\"; capabilities: jacobian, vjp")
	for _, st := range surrogate.Settings {
		fmt.Fprintf(w, "  setting %s = %q (choices %q): %s\n", st.Name, st.Choices[int(st.Default)], st.Choices, st.Doc)
	}
	fmt.Fprintln(w)
	section("LIKELIHOODS", builtin.Names(builtin.Likelihoods), func(n string) abi.Spec { return builtin.Likelihoods[n].Spec })
	section("METHODS", builtin.Names(builtin.Methods), func(n string) abi.Spec { return builtin.Methods[n].Spec })
	return nil
}

// sdkDirs are the folders of each language's SDK in kinfersdk.SDK.
var sdkDirs = map[string]string{"c": "sdk/c", "go": "sdk/go", "rust": "sdk/rust", "assemblyscript": "sdk/assemblyscript"}

// printSDKSources writes the embedded SDK sources of lang, tests left
// out, each after a comment line naming its path (audit 6: the Rust and
// AssemblyScript APIs could be read only in the repository).
func printSDKSources(w io.Writer, lang string) error {
	dir, ok := sdkDirs[lang]
	if !ok {
		return usageError{fmt.Errorf("--print-sdk %q: want c, go, rust or assemblyscript", lang)}
	}
	comment := "//"
	dirs := []string{dir}
	if lang == "go" {
		// A Go plugin compiles against the abi package's types as well
		// (abi.Spec, abi.Method, abi.Problem, …; audit 7).
		dirs = []string{"abi", dir}
	}
	for _, dir := range dirs {
		if err := printSDKDir(w, dir, comment); err != nil {
			return err
		}
	}
	return nil
}

// printSDKDir writes the embedded files under dir, tests left out, each
// after a comment line naming its path.
func printSDKDir(w io.Writer, dir, comment string) error {
	return iofs.WalkDir(kinfersdk.SDK, dir, func(path string, d iofs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := iofs.ReadFile(kinfersdk.SDK, path)
		if err != nil {
			return err
		}
		c := comment
		if strings.HasSuffix(path, ".json") || strings.HasSuffix(path, ".toml") {
			c = "#" // not valid in JSON either, but plain to read
		}
		// A marker no source holds (audit 18: the SDKs' own section
		// comments "// ---- … ----" read as file names).
		if _, err := fmt.Fprintf(w, "%s ==== kinfer sdk file: %s ====\n", c, path); err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
}

func cmdBuild(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	header := fs.Bool("print-header", false, "print the C header kinfer.h this binary carries (and builds C plugins with when their\nfolder has none) instead of building; kinfer build --print-header > kinfer.h to read it or for an editor")
	timeout := fs.Duration("timeout", build.DefaultTimeout, "stop the compiler after this long (a source reading a named pipe, a compiler that never returns)")
	printSDK := fs.String("print-sdk", "", "print the sources of the SDK this binary carries for a language (c, go, rust or assemblyscript),\neach file after a line \"// ==== kinfer sdk file: PATH ====\", instead of building: the API a plugin compiles against")
	pos, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	if *printSDK != "" {
		if len(pos) != 0 || *header {
			return usageError{fmt.Errorf("--print-sdk takes no PLUGIN_DIR and no --print-header")}
		}
		return printSDKSources(stdout, *printSDK)
	}
	if *header {
		if len(pos) != 0 {
			return usageError{fmt.Errorf("--print-header takes no PLUGIN_DIR")}
		}
		b, err := iofs.ReadFile(kinfersdk.SDK, "sdk/c/kinfer.h")
		if err != nil {
			return err
		}
		_, err = stdout.Write(b)
		return err
	}
	if len(pos) != 1 {
		return usageError{fmt.Errorf("want 1 argument(s), got %d", len(pos))}
	}
	// SIGINT or SIGTERM (timeout, a CI job's cancel) stops the compiler and
	// every process it started, and removes the build's temporary files.
	ctx, stop := interruptible(stderr, "stopping the compiler")
	defer stop()
	if st, err := os.Stat(pos[0]); err == nil && !st.IsDir() {
		return usageError{fmt.Errorf("%s is a file: kinfer build takes the plugin's folder, the one holding its plugin.toml and sources", pos[0])}
	}
	if *timeout <= 0 {
		return usageError{fmt.Errorf("--timeout must be a positive duration (e.g. 10m), got %v", *timeout)}
	}
	res, err := build.BuildContext(ctx, pos[0], build.Options{Timeout: *timeout})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "built %s (%s, %d bytes) with %s\n  %s\nsha256 %s written to %s\n",
		guesttext.Escape(res.Wasm), res.Lang, res.Size, guesttext.Escape(res.Toolchain), guesttext.Escape(strings.Join(res.Command, " ")), res.SHA256, guesttext.Escape(res.Manifest))
	if res.EmbeddedSDK {
		what := map[string]string{
			build.LangC:    "kinfer.h",
			build.LangGo:   "github.com/kinfer/kinfer (abi, sdk/go) through a temporary go.mod overlay; your files are unchanged",
			build.LangRust: "the crate kinfer (sdk/rust), compiled to a temporary rlib",
			build.LangAS:   "the package kinfer (sdk/assemblyscript), given to asc with --path",
		}[res.Lang]
		fmt.Fprintf(stdout, "used the guest SDK carried in kinfer %s (ABI %d): %s\n", run.Version, abi.Version, what)
	}
	for _, n := range res.Notes {
		fmt.Fprintf(stdout, "NOTE: %s\n", n)
	}
	// A module that builds but cannot describe itself (a spec typo, a
	// function without its capability) is the author's to fix now, not
	// at the first run (audit 4).
	rt, err := newRuntime(ctx, nil)
	if err != nil {
		return err
	}
	defer rt.Close(ctx)
	if _, err := loadPlugin(ctx, rt, res.Manifest); err != nil {
		if ctx.Err() != nil {
			// Interrupted while checking, not a broken module (audit 10).
			return fmt.Errorf("built %s and pinned it in %s, but interrupted while checking that it loads: kinfer validate %s checks it", res.Wasm, res.Manifest, res.Manifest)
		}
		return fmt.Errorf("built %s, but it does not load: %w", res.Wasm, err)
	}
	return nil
}

func cmdAnalyze(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("analyze", flag.ContinueOnError)
	workers := fs.Int("workers", runtime.NumCPU(), "parallel evaluation workers")
	pred := fs.Int("predictive", 1000, "posterior samples evaluated for the predictive fit")
	truth := fs.String("truth", "", "a JSON `FILE` of known true values, {\"param\": value, ...} (e.g. a synthetic example's truth.json):\nreport per parameter whether the truth lies in the central 90 % band (p05–p95), its posterior\npercentile (fraction of samples below it) and how many of the parameters given are inside;\na key that is not a model parameter is an error, free parameters without a truth are listed as skipped")
	budgetFlag := fs.String("memory-budget", "", "memory samples.csv may take when read, e.g. 8GiB (default: half the physical memory, at most 16 GiB)")
	trust := fs.Bool("trust-study", false, trustStudyDoc)
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	if err := checkWorkers(*workers); err != nil {
		return err
	}
	budget := run.DefaultMemoryBudget()
	if *budgetFlag != "" {
		if budget, err = run.ParseBytes(*budgetFlag); err != nil {
			return usageError{fmt.Errorf("--memory-budget: %w", err)}
		}
	}
	if *pred < 1 {
		// 0 was taken as "not given" (1000 evaluated; audit 9).
		return usageError{fmt.Errorf("--predictive must be ≥ 1, got %d", *pred)}
	}
	// A run writing into the directory would change samples.csv under
	// the analysis.
	lock, err := lockRunDir(pos[0], "analyze: ")
	if err != nil {
		return err
	}
	defer lock.Unlock()
	ctx := context.Background()
	rt, err := newRuntime(ctx, nil)
	if err != nil {
		return err
	}
	defer rt.Close(ctx)
	prev, err := readStageStart(pos[0]) // a stage of a multi-stage study
	if err != nil {
		return err
	}
	a, err := analyze.Analyze(ctx, pos[0], analyze.Options{Workers: *workers, MaxPredictive: *pred, Runtime: rt, Truth: *truth, Previous: prev, MemoryBudget: budget, IgnoreTrust: ignoreTrust(*trust, "kinfer analyze")})
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, a.Text())
	fmt.Fprintf(stdout, "written: %s\n", filepath.Join(pos[0], analyze.OutputFile))
	return nil
}

// asJSONNumber is v as JSON when it is a number of another type (int64,
// json.Number), else "".
func asJSONNumber(v any) string {
	switch x := v.(type) {
	case int64, int32, uint64, json.Number:
		return fmt.Sprint(x)
	}
	return ""
}
