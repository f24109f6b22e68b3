package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/models/ligament"
	"github.com/kinfer/kinfer/host/build"
	"github.com/kinfer/kinfer/host/manifest"
	"github.com/kinfer/kinfer/internal/guesttext"
)

// kinfer new KIND NAME --lang LANG: a plugin folder that builds, a study
// that runs it on synthetic data made from known values (truth.json), and
// test.sh, which builds, runs and checks that the posterior's central 90 %
// band holds those values.

var pluginName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// newLangs are the languages of kinfer new, with the source file each
// writes (NAME is replaced by the plugin name).
var newLangs = map[string]string{
	build.LangGo:   "main.go",
	build.LangC:    "NAME.c",
	build.LangRust: "lib.rs",
	build.LangAS:   "NAME.ts",
}

func cmdNew(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("new", flag.ContinueOnError)
	lang := fs.String("lang", build.LangGo, "the plugin's language: go, c, rust or assemblyscript (as)")
	dir := fs.String("dir", "", "the folder to create (default: ./NAME); it must not exist")
	pos, err := parse(fs, args, 2)
	if err != nil {
		if he, ok := err.(helpError); ok {
			// The flags of the generic help, after this command's own
			// description (audit 20: the usage line was printed twice).
			flags := he.text
			if i := strings.Index(flags, "flags ("); i >= 0 {
				flags = flags[i:]
			}
			return helpError{"usage: kinfer new model|likelihood|method NAME [--lang go|c|rust|assemblyscript] [--dir DIR]\n\n" +
				"Writes a plugin folder: plugin.toml, a source that builds with kinfer build, study.toml with data.csv\n" +
				"(synthetic, made from the values in truth.json) that runs it, and test.sh, which builds the plugin,\n" +
				"runs the study and checks that the posterior recovers truth.json.\n\n" + flags}
		}
		return err
	}
	kind, name := pos[0], pos[1]
	if *lang == "as" || *lang == "ts" {
		*lang = build.LangAS
	}
	if _, ok := newLangs[*lang]; !ok {
		return usageError{fmt.Errorf("--lang %q: want one of go, c, rust, assemblyscript", *lang)}
	}
	switch abi.Kind(kind) {
	case abi.KindModel, abi.KindLikelihood:
	case abi.KindMethod:
		if _, ok := methodSources[*lang]; !ok { // every language has one; kept for a new language
			return fmt.Errorf("kinfer new method --lang %s: the %s SDK does not serve methods yet; "+
				"use --lang go or rust, or write a %s method against abi/ABI.md §6.3 as plugins/c/gaussnewton does in C", *lang, *lang, *lang)
		}
	default:
		return usageError{fmt.Errorf("kind %q: want model, likelihood or method", kind)}
	}
	if !pluginName.MatchString(name) {
		return usageError{fmt.Errorf("name %q: a plugin name is lower-case letters, digits and '-', starting with a letter", name)}
	}
	if len(name) > manifest.MaxNameLen {
		return usageError{fmt.Errorf("name %q: at most %d characters (a plugin.toml refuses a longer name)", name, manifest.MaxNameLen)}
	}
	out := *dir
	if out == "" {
		out = name
	}
	// Printed on the "wrote" and "next:" lines, and the plugin's folder:
	// no control character or separator (audit 14: a line feed split and
	// forged them).
	if !guesttext.Clean(out) {
		return usageError{fmt.Errorf("--dir %s: the folder's name has a control character, a line or paragraph separator, a bidirectional control or invalid UTF-8", guesttext.Escape(out))}
	}
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("%s already exists; kinfer new writes a new folder", out)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	files, err := newFiles(abi.Kind(kind), name, *lang)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	var names []string
	for _, f := range files {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(f.name, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(filepath.Join(out, f.name), []byte(f.text), mode); err != nil {
			return err
		}
		names = append(names, f.name)
	}
	fmt.Fprintf(stdout, "wrote %s/: %s\n", out, strings.Join(names, ", "))
	// Quoted for a POSIX shell: the lines are meant to be pasted (audit 8:
	// a folder with a space split, one with $(…) would have run it).
	fmt.Fprintf(stdout, "next:\n  kinfer build %s\n  kinfer run %s\n  sh %s   (build, run and check against truth.json)\n",
		shellQuote(out), shellQuote(filepath.Join(out, "study.toml")), shellQuote(filepath.Join(out, "test.sh")))
	if hint := toolchainHint(*lang); hint != "" {
		fmt.Fprintf(stdout, "%s\n", hint)
	}
	return nil
}

// toolchainHint says what a language needs when its compiler is missing.
func toolchainHint(lang string) string {
	if _, err := build.Toolchain(lang, build.Options{}); err != nil {
		return "note: " + err.Error()
	}
	return ""
}

type newFile struct{ name, text string }

// tmplData is what the templates see.
type tmplData struct {
	Name, Lang, Kind, Wasm, Source string
	Data, Truth                    string
}

func newFiles(kind abi.Kind, name, lang string) ([]newFile, error) {
	src := strings.ReplaceAll(newLangs[lang], "NAME", name)
	d := tmplData{Name: name, Lang: lang, Kind: string(kind), Wasm: name + ".wasm", Source: src}
	var srcTmpl, studyTmpl string
	switch kind {
	case abi.KindModel:
		d.Data, d.Truth = lineData()
		srcTmpl, studyTmpl = modelSources[lang], modelStudy
	case abi.KindLikelihood:
		d.Data, d.Truth = ligamentData()
		srcTmpl, studyTmpl = likelihoodSources[lang], likelihoodStudy
	case abi.KindMethod:
		d.Data, d.Truth = ligamentData()
		srcTmpl, studyTmpl = methodSources[lang], methodStudy
	}
	var files []newFile
	for _, f := range []struct{ name, tmpl string }{
		{"plugin.toml", manifestTmpl}, {src, srcTmpl}, {"study.toml", studyTmpl},
		{"data.csv", "[%.Data%]"}, {"truth.json", "[%.Truth%]"}, {"test.sh", testTmpl},
	} {
		t, err := template.New(f.name).Delims("[%", "%]").Parse(f.tmpl)
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		if err := t.Execute(&b, d); err != nil {
			return nil, err
		}
		files = append(files, newFile{f.name, b.String()})
	}
	return files, nil
}

// lineData: y = a + b·x at x = 0, 0.1, …, 1 with a = 1.5, b = −0.8, exact
// (the study's σ = 0.05 gives a posterior around these values).
func lineData() (csv, truth string) {
	var b strings.Builder
	b.WriteString("x,y\n")
	for i := 0; i <= 10; i++ {
		x := float64(i) / 10
		fmt.Fprintf(&b, "%g,%.15g\n", x, 1.5-0.8*x)
	}
	return b.String(), "{\"a\": 1.5, \"b\": -0.8}\n"
}

// ligamentData: the builtin ligament (Bartsoen et al. 2023, Eq. 1–2) with
// k = 5000 N, ε_r = 0.02, L_r = 30 mm at L = 30, 30.5, …, 36 mm, exact.
func ligamentData() (csv, truth string) {
	m, _ := ligament.New([]float64{30})
	var x []float64
	for L := 30.0; L <= 36; L += 0.5 {
		x = append(x, L)
	}
	y := make([]float64, 2*len(x))
	m.Eval([]float64{5000, 0.02}, x, y)
	var b strings.Builder
	b.WriteString("length_mm,force_N\n")
	for i, L := range x {
		fmt.Fprintf(&b, "%g,%.15g\n", L, math.Round(y[2*i]*1e9)/1e9)
	}
	return b.String(), "{\"k\": 5000, \"eps_r\": 0.02}\n"
}

const manifestTmpl = `# [%.Kind%] plugin [%.Name%] ([%.Lang%]), made by kinfer new. Manifest: abi/ABI.md §9.
# kinfer build . compiles [%.Source%] into [%.Wasm%] and pins its sha256 below.
name = "[%.Name%]"
version = "0.1.0"
kind = "[%.Kind%]"
abi = 1
wasm = "[%.Wasm%]"

[limits]
memory_mib = 64              # the most the module's memory may grow to (a Go guest needs at least 8)
# fuel = 20000000000         # work per call (per point of a batch); the default
`

const testTmpl = `#!/bin/sh
# Test of the [%.Kind%] plugin [%.Name%]: builds it, runs study.toml on data.csv
# (synthetic, made from the values in truth.json) and checks that every value
# of truth.json lies in the posterior's central 90 % band. KINFER names the
# kinfer binary (default: kinfer on PATH). Exit status 0: passed.
set -eu
KINFER=${KINFER:-kinfer}
case $KINFER in
*/*) KINFER=$(cd "$(dirname "$KINFER")" && pwd)/$(basename "$KINFER") ;; # a relative path, before the cd
esac
cd "$(dirname "$0")"
"$KINFER" build .
"$KINFER" validate plugin.toml
rm -rf out
"$KINFER" run study.toml -o out --seed 1
"$KINFER" analyze out --truth truth.json > out/analysis.txt
cat out/analysis.txt
n=$(tr ',' '\n' < truth.json | grep -c ':')
if grep -q ": $n of $n inside the central 90 % band" out/analysis.txt; then
  echo "PASS: [%.Name%] recovers truth.json"
else
  echo "FAIL: [%.Name%]: not every value of truth.json is inside the posterior's central 90 % band (out/analysis.txt)"
  exit 1
fi
`

const modelStudy = `# Runs the model plugin [%.Name%] (plugin.toml): the posterior of a and b of
# y = a + b·x given data.csv, made with a = 1.5, b = -0.8 (truth.json).
# kinfer run study.toml   (docs/STUDY.md describes every key)
name = "[%.Name%]"
seed = 1

[model]
plugin = "plugin.toml"

[[data]]
name = "line"
file = "data.csv"

[[likelihood]]
use = "gaussian"
sigma = 0.05

[prior]
a = { uniform = [-10.0, 10.0] }
b = { uniform = [-10.0, 10.0] }

[method]
use = "metropolis"
burn_in = 2000
samples = 4000
`

const likelihoodStudy = `# Runs the likelihood plugin [%.Name%] (plugin.toml) with the builtin
# Blankevoort ligament (Bartsoen et al. 2023, Eq. 1-2): the posterior of k
# and eps_r given forces made with k = 5000 N, eps_r = 0.02 (truth.json).
# kinfer run study.toml   (docs/STUDY.md describes every key)
name = "[%.Name%]"
seed = 1

[model]
use = "ligament"
ref_length_mm = 30.0

[[data]]
name = "forces"
file = "data.csv"

[[likelihood]]
plugin = "plugin.toml"
sigma = 2.0

[prior]
k = { uniform = [2000.0, 12000.0] }
eps_r = { uniform = [-0.1, 0.1] }

[method]
use = "metropolis"
burn_in = 3000
samples = 4000
`

const methodStudy = `# Runs the method plugin [%.Name%] (plugin.toml) on the builtin Blankevoort
# ligament (Bartsoen et al. 2023, Eq. 1-2): the posterior of k and eps_r
# given forces made with k = 5000 N, eps_r = 0.02 (truth.json).
# kinfer run study.toml   (docs/STUDY.md describes every key)
name = "[%.Name%]"
seed = 1

[model]
use = "ligament"
ref_length_mm = 30.0

[[data]]
name = "forces"
file = "data.csv"

[[likelihood]]
use = "gaussian"
sigma = 20.0

[prior]
k = { uniform = [2000.0, 12000.0] }
eps_r = { uniform = [-0.1, 0.1] }

[method]
plugin = "plugin.toml"
draws = 20000
`

var modelSources = map[string]string{
	build.LangGo: `// Command [%.Name%] is a kinfer model plugin, made by kinfer new: the straight
// line y = a + b·x (replace it with your model). Contract: abi/ABI.md §6.1.
//
//	kinfer build .           # compiles [%.Wasm%] with the Go SDK carried in kinfer
//	kinfer run study.toml    # fits a and b to data.csv
//	sh test.sh               # both, and checks the result against truth.json
package main

import (
	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/sdk/go/model"
)

type plugin struct{}

func (plugin) Spec() abi.Spec {
	return abi.Spec{Kind: abi.KindModel, Name: "[%.Name%]", Version: "0.1.0",
		Doc: "straight line y = a + b·x",
		Params: []abi.Param{
			{Name: "a", Lower: -10, Upper: 10, Default: 0, Doc: "intercept"},
			{Name: "b", Lower: -10, Upper: 10, Default: 0, Doc: "slope"},
		},
		Conditions: []abi.Column{{Name: "x"}},
		Outputs:    []abi.Column{{Name: "y"}}}
}

// Eval: one θ at all K conditions; x is K×c, y is K×m, row-major. Return
// abi.Failed (no solution) or abi.Invalid (outside the domain) for a point
// that cannot be evaluated.
func (plugin) Eval(theta, x, y []float64) abi.Status {
	a, b := theta[0], theta[1]
	for i := range x {
		y[i] = a + b*x[i]
	}
	return abi.OK
}

func init() { model.Serve(plugin{}) }
func main() {}
`,
	build.LangC: `/*
 * [%.Name%]: a kinfer model plugin, made by kinfer new: the straight line
 * y = a + b·x (replace it with your model). Contract: abi/ABI.md §6.1; the
 * header's comment (kinfer build --print-header) documents settings,
 * Jacobians and errors.
 *
 *   kinfer build .           compiles [%.Wasm%] with the kinfer.h carried in kinfer
 *   kinfer run study.toml    fits a and b to data.csv
 *   sh test.sh               both, and checks the result against truth.json
 */
#define KINFER_MODEL
#include "kinfer.h"

const char kinfer_spec[] =
    "{\"kind\":\"model\",\"name\":\"[%.Name%]\",\"version\":\"0.1.0\","
    "\"doc\":\"straight line y = a + b x\","
    "\"params\":[{\"name\":\"a\",\"lower\":-10,\"upper\":10,\"default\":0,\"doc\":\"intercept\"},"
    "{\"name\":\"b\",\"lower\":-10,\"upper\":10,\"default\":0,\"doc\":\"slope\"}],"
    "\"conditions\":[{\"name\":\"x\"}],\"outputs\":[{\"name\":\"y\"}]}";

/* One θ at all K conditions: x is K×c, y is K×m, row-major. Return
 * KINFER_FAILED (no solution) or KINFER_INVALID (outside the domain) for a
 * point that cannot be evaluated. */
int model_eval(const double *theta, int K, const double *x, double *y) {
  double a = theta[0], b = theta[1];
  for (int i = 0; i < K; i++) y[i] = a + b * x[i];
  return KINFER_OK;
}
`,
	build.LangRust: `//! [%.Name%]: a kinfer model plugin, made by kinfer new: the straight line
//! y = a + b·x (replace it with your model). Contract: abi/ABI.md §6.1; the
//! SDK is the crate kinfer (sdk/rust), carried in the kinfer binary.
//!
//!   kinfer build .           compiles [%.Wasm%] (rustc for wasm32-unknown-unknown)
//!   kinfer run study.toml    fits a and b to data.csv
//!   sh test.sh               both, and checks the result against truth.json

use kinfer::{Column, Model, Param, Spec, Status};

struct Plugin;

impl Model for Plugin {
    const SPEC: Spec = Spec::model("[%.Name%]")
        .version("0.1.0")
        .doc("straight line y = a + b·x")
        .params(&[
            Param::new("a", -10.0, 10.0, 0.0).doc("intercept"),
            Param::new("b", -10.0, 10.0, 0.0).doc("slope"),
        ])
        .conditions(&[Column::new("x")])
        .outputs(&[Column::new("y")]);

    // Settings in spec order (none here); Err refuses them.
    fn new(_settings: &[f64]) -> Result<Self, String> {
        Ok(Plugin)
    }

    // One θ at all K conditions: x is K×c, y is K×m, row-major. Return
    // Status::Failed (no solution) or Status::Invalid (outside the domain)
    // for a point that cannot be evaluated.
    fn eval(&self, theta: &[f64], x: &[f64], y: &mut [f64]) -> Status {
        let (a, b) = (theta[0], theta[1]);
        for (yi, xi) in y.iter_mut().zip(x) {
            *yi = a + b * xi;
        }
        Status::Ok
    }
}

kinfer::export_model!(Plugin);
`,
	build.LangAS: `// [%.Name%]: a kinfer model plugin, made by kinfer new: the straight line
// y = a + b·x (replace it with your model). Contract: abi/ABI.md §6.1; the
// SDK is the package kinfer (sdk/assemblyscript), carried in the kinfer binary.
//
//   kinfer build .           compiles [%.Wasm%] (AssemblyScript's asc)
//   kinfer run study.toml    fits a and b to data.csv
//   sh test.sh               both, and checks the result against truth.json
import { Column, F64s, Model, Param, Spec, Status, serveModel } from "kinfer";
export * from "kinfer/model"; // the ABI's exports

class Plugin extends Model {
  // One θ at all K conditions: x is K×c, y is K×m, row-major. Return
  // Status.Failed (no solution) or Status.Invalid (outside the domain) for
  // a point that cannot be evaluated.
  eval(theta: F64s, x: F64s, y: F64s): Status {
    const a = theta[0], b = theta[1];
    for (let i = 0; i < x.length; i++) y[i] = a + b * x[i];
    return Status.Ok;
  }
}

serveModel(new Plugin(), new Spec("model", "[%.Name%]")
  .withVersion("0.1.0")
  .withDoc("straight line y = a + b·x")
  .param(new Param("a", -10, 10, 0).withDoc("intercept"))
  .param(new Param("b", -10, 10, 0).withDoc("slope"))
  .condition(new Column("x"))
  .output(new Column("y")));
`,
}

// The likelihood templates: the Laplace (double-exponential) likelihood,
// log L = Σ −|obs − y|/σ − ln(2σ) over the observed values.
var likelihoodSources = map[string]string{
	build.LangGo: `// Command [%.Name%] is a kinfer likelihood plugin, made by kinfer new: the
// Laplace likelihood log L = Σ −|obs − y|/σ − ln(2σ) over the observed
// values (replace it with yours). Contract: abi/ABI.md §6.2.
//
//	kinfer build .           # compiles [%.Wasm%] with the Go SDK carried in kinfer
//	kinfer run study.toml    # uses it with the builtin ligament model
//	sh test.sh               # both, and checks the result against truth.json
package main

import (
	"math"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/sdk/go/likelihood"
)

type plugin struct{}

func (plugin) Spec() abi.Spec {
	return abi.Spec{Kind: abi.KindLikelihood, Name: "[%.Name%]", Version: "0.1.0",
		Doc: "Laplace likelihood: sum of -|obs - y|/sigma - ln(2 sigma)"}
}

// LogLikelihood: y, obs, sigma are K×m; a NaN observation is unobserved
// and skipped.
func (plugin) LogLikelihood(m int, y, obs, sigma []float64) (float64, abi.Status) {
	ll := 0.0
	for i := range y {
		if math.IsNaN(obs[i]) {
			continue
		}
		if !(sigma[i] > 0) {
			return 0, abi.Invalid
		}
		ll -= math.Abs(obs[i]-y[i])/sigma[i] + math.Log(2*sigma[i])
	}
	return ll, abi.OK
}

func init() { likelihood.Serve(plugin{}) }
func main() {}
`,
	build.LangC: `/*
 * [%.Name%]: a kinfer likelihood plugin, made by kinfer new: the Laplace
 * likelihood log L = Σ −|obs − y|/σ − ln(2σ) over the observed values
 * (replace it with yours). Contract: abi/ABI.md §6.2.
 *
 *   kinfer build .           compiles [%.Wasm%] with the kinfer.h carried in kinfer
 *   kinfer run study.toml    uses it with the builtin ligament model
 *   sh test.sh               both, and checks the result against truth.json
 */
#define KINFER_LIKELIHOOD
#include "kinfer.h"
#include <math.h>

const char kinfer_spec[] =
    "{\"kind\":\"likelihood\",\"name\":\"[%.Name%]\",\"version\":\"0.1.0\","
    "\"doc\":\"Laplace likelihood: sum of -|obs - y|/sigma - ln(2 sigma)\"}";

/* y, obs, sigma are K×m; a NaN observation is unobserved and skipped. */
int likelihood_eval(int K, int m, const double *y, const double *obs, const double *sigma, double *out) {
  double ll = 0;
  for (int i = 0; i < K * m; i++) {
    if (isnan(obs[i])) continue;
    if (!(sigma[i] > 0)) return KINFER_INVALID;
    ll -= fabs(obs[i] - y[i]) / sigma[i] + log(2 * sigma[i]);
  }
  *out = ll;
  return KINFER_OK;
}
`,
	build.LangRust: `//! [%.Name%]: a kinfer likelihood plugin, made by kinfer new: the Laplace
//! likelihood log L = Σ −|obs − y|/σ − ln(2σ) over the observed values
//! (replace it with yours). Contract: abi/ABI.md §6.2; the SDK is the crate
//! kinfer (sdk/rust), carried in the kinfer binary.
//!
//!   kinfer build .           compiles [%.Wasm%] (rustc for wasm32-unknown-unknown)
//!   kinfer run study.toml    uses it with the builtin ligament model
//!   sh test.sh               both, and checks the result against truth.json

use kinfer::{Likelihood, Spec, Status};

struct Plugin;

impl Likelihood for Plugin {
    const SPEC: Spec = Spec::likelihood("[%.Name%]")
        .version("0.1.0")
        .doc("Laplace likelihood: sum of -|obs - y|/sigma - ln(2 sigma)");

    fn new(_settings: &[f64]) -> Result<Self, String> {
        Ok(Plugin)
    }

    // y, obs, sigma are K×m; a NaN observation is unobserved and skipped.
    fn eval(&self, _m: usize, y: &[f64], obs: &[f64], sigma: &[f64]) -> Result<f64, Status> {
        let mut ll = 0.0;
        for i in 0..y.len() {
            if obs[i].is_nan() {
                continue;
            }
            if !(sigma[i] > 0.0) {
                return Err(Status::Invalid);
            }
            ll -= (obs[i] - y[i]).abs() / sigma[i] + (2.0 * sigma[i]).ln();
        }
        Ok(ll)
    }
}

kinfer::export_likelihood!(Plugin);
`,
	build.LangAS: `// [%.Name%]: a kinfer likelihood plugin, made by kinfer new: the Laplace
// likelihood log L = Σ −|obs − y|/σ − ln(2σ) over the observed values
// (replace it with yours). Contract: abi/ABI.md §6.2; the SDK is the package
// kinfer (sdk/assemblyscript), carried in the kinfer binary.
//
//   kinfer build .           compiles [%.Wasm%] (AssemblyScript's asc)
//   kinfer run study.toml    uses it with the builtin ligament model
//   sh test.sh               both, and checks the result against truth.json
import { F64s, Likelihood, Spec, Status, serveLikelihood } from "kinfer";
export * from "kinfer/likelihood"; // the ABI's exports

class Plugin extends Likelihood {
  // y, obs, sigma are K×m; a NaN observation is unobserved and skipped.
  // The log-likelihood goes to out[0].
  eval(m: i32, y: F64s, obs: F64s, sigma: F64s, out: F64s): Status {
    let ll = 0.0;
    for (let i = 0; i < y.length; i++) {
      if (isNaN(obs[i])) continue;
      if (!(sigma[i] > 0)) return Status.Invalid;
      ll -= Math.abs(obs[i] - y[i]) / sigma[i] + Math.log(2 * sigma[i]);
    }
    out[0] = ll;
    return Status.Ok;
  }
}

serveLikelihood(new Plugin(), new Spec("likelihood", "[%.Name%]")
  .withVersion("0.1.0")
  .withDoc("Laplace likelihood: sum of -|obs - y|/sigma - ln(2 sigma)"));
`,
}

// The method templates: sampling importance resampling (Rubin 1988): draws
// from the prior, weights by the likelihood, resamples. The C one is
// written against the ABI (kinfer.h serves models and likelihoods), the
// others with their SDKs; Rust, C and AssemblyScript share the splitmix64
// stream, so they give the same samples.
var methodSources = map[string]string{
	build.LangGo: `// Command [%.Name%] is a kinfer method plugin, made by kinfer new: sampling
// importance resampling (Rubin 1988, "Using the SIR algorithm to simulate
// posterior distributions"): it asks the host for draws points from the
// prior, weights each by its likelihood and resamples draws of them with
// those weights (replace it with your sampler or optimiser). Contract:
// abi/ABI.md §6.3; the SDK is sdk/go/method.
//
//	kinfer build .           # compiles [%.Wasm%] with the Go SDK carried in kinfer
//	kinfer run study.toml    # uses it on the builtin ligament model
//	sh test.sh               # both, and checks the result against truth.json
package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/sdk/go/method"
)

var spec = abi.Spec{Kind: abi.KindMethod, Name: "[%.Name%]", Version: "0.1.0",
	Doc: "sampling importance resampling from the prior",
	// prior_draws: its weights make a posterior only of genuine prior
	// draws, so a study's init rows are refused for it (ABI.md §6.3).
	Capabilities: []string{"prior_draws"},
	Settings:     []abi.Setting{{Name: "draws", Default: 10000, Doc: "prior draws, and samples returned"}}}

type sir struct {
	draws   int
	rng     *rand.Rand
	results []abi.Result
	done    bool
}

func newSIR(s []float64) (abi.Method, error) {
	if s[0] < 1 || s[0] > 1e5 || s[0] != math.Trunc(s[0]) {
		return nil, fmt.Errorf("[%.Name%]: draws must be an integer in [1, 1e5], got %g", s[0])
	}
	return &sir{draws: int(s[0])}, nil
}

func (m *sir) Spec() abi.Spec { return spec }

// Init: all randomness comes from the study seed (ABI.md §8).
func (m *sir) Init(p abi.Problem) error {
	m.rng = rand.New(rand.NewPCG(p.Seed, 0x5349520a))
	return nil
}

// Ask: one batch of prior draws, made by the host.
func (m *sir) Ask() (abi.Batch, error) { return abi.Batch{Draw: m.draws}, nil }

func (m *sir) Tell(r []abi.Result) error {
	m.results, m.done = r, true
	return nil
}

func (m *sir) Done() bool { return m.done }

// Report: draws samples resampled with weights exp(log L − max log L).
func (m *sir) Report() (abi.Report, error) {
	best := math.Inf(-1)
	for _, r := range m.results {
		best = math.Max(best, r.LogLik)
	}
	cum := make([]float64, len(m.results))
	total := 0.0
	for i, r := range m.results {
		if r.Status == abi.OK {
			total += math.Exp(r.LogLik - best)
		}
		cum[i] = total
	}
	if !(total > 0) {
		return abi.Report{}, nil
	}
	var rep abi.Report
	for range m.draws {
		i := min(sort.SearchFloat64s(cum, m.rng.Float64()*total), len(cum)-1)
		r := m.results[i]
		rep.Samples = append(rep.Samples, abi.Sample{Theta: r.Theta, LogPrior: r.LogPrior, LogLik: r.LogLik})
	}
	ess := total * total
	sq := 0.0
	for _, r := range m.results {
		if r.Status == abi.OK {
			w := math.Exp(r.LogLik - best)
			sq += w * w
		}
	}
	rep.Extra = map[string]any{"effective_sample_size": ess / sq}
	return rep, nil
}

func init() { method.ServeNew(spec, newSIR) }
func main() {}
`,
	build.LangC: `/*
 * [%.Name%]: a kinfer method plugin, made by kinfer new: sampling importance
 * resampling (Rubin 1988, "Using the SIR algorithm to simulate posterior
 * distributions"): it asks the host for draws points from the prior, weights
 * each by its likelihood and resamples draws of them with those weights
 * (replace it with your sampler or optimiser). kinfer.h serves models and
 * likelihoods; a C method implements abi/ABI.md §3 and §6.3 itself, as here
 * (plugins/c/gaussnewton is a larger example).
 *
 *   kinfer build .           compiles [%.Wasm%] (clang --target=wasm32-wasi)
 *   kinfer run study.toml    uses it on the builtin ligament model
 *   sh test.sh               both, and checks the result against truth.json
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT(name) __attribute__((export_name(name)))

/* ---- §3: the exports every plugin has ---- */

static const char spec[] =
    "{\"kind\":\"method\",\"name\":\"[%.Name%]\",\"version\":\"0.1.0\","
    "\"doc\":\"sampling importance resampling from the prior\","
    /* prior_draws: its weights make a posterior only of genuine prior
     * draws, so a study's init rows are refused for it (ABI.md §6.3). */
    "\"capabilities\":[\"prior_draws\"],"
    "\"settings\":[{\"name\":\"draws\",\"default\":10000,\"doc\":\"prior draws, and samples returned\"}]}";

static char errbuf[512];
static int errlen;

static int64_t span(const void *p, uint32_t n) {
  return (p && n) ? (int64_t)(((uint64_t)n << 32) | (uint32_t)(uintptr_t)p) : 0;
}

static int fail(const char *msg, double v) {
  errlen = snprintf(errbuf, sizeof errbuf, msg, v);
  if (errlen < 0) errlen = 0;
  if (errlen >= (int)sizeof errbuf) errlen = sizeof errbuf - 1;
  return 1;
}

EXPORT("kinfer_abi_version") int32_t kinfer_abi_version(void) { return 1; }
EXPORT("kinfer_describe") int64_t kinfer_describe(void) { return span(spec, sizeof spec - 1); }
EXPORT("kinfer_alloc") void *kinfer_alloc(int32_t n) { return n < 0 ? NULL : malloc(n ? (size_t)n : 1); }
EXPORT("kinfer_free") void kinfer_free(void *p, int32_t n) { (void)n; free(p); }
EXPORT("kinfer_last_error") int64_t kinfer_last_error(void) { return span(errbuf, (uint32_t)errlen); }

static int draws = 10000, d;

EXPORT("kinfer_configure") int32_t kinfer_configure(const double *s, int32_t n) {
  if (n != 1) return fail("configure: want 1 setting, got %g", n);
  if (!(s[0] >= 1 && s[0] <= 1e5 && s[0] == floor(s[0])))
    return fail("[%.Name%]: draws must be an integer in [1, 1e5], got %g", s[0]);
  draws = (int)s[0];
  return 0;
}

/* ---- §6.3: the method ---- */

static uint64_t rng;
static int32_t header[4];
static double *theta, *logprior, *loglik, *out;
static int told;

/* splitmix64 (Steele, Lea & Flood 2014): a uniform in [0, 1). */
static double uniform(void) {
  uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (double)((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
}

/* All randomness comes from the study seed (ABI.md §8). */
EXPORT("kinfer_method_init") int32_t kinfer_method_init(int32_t dim, int64_t seed, const double *lo, const double *hi) {
  (void)lo, (void)hi;
  if (dim < 1) return fail("init: d = %g", dim);
  d = dim;
  rng = (uint64_t)seed ^ 0x5349520aull;
  told = 0;
  return 0;
}

/* One batch of prior draws, made by the host (mode 1). */
EXPORT("kinfer_method_ask") int32_t *kinfer_method_ask(void) {
  header[0] = draws, header[1] = 1, header[2] = 1, header[3] = 0;
  return header;
}

EXPORT("kinfer_method_tell") int32_t kinfer_method_tell(int32_t n, const double *th, const int32_t *status,
                                                        const double *lp, const double *ll, const double *grad) {
  (void)grad;
  if (n != draws) return fail("tell: %g results for the batch asked", n);
  theta = realloc(theta, sizeof(double) * (size_t)n * d);
  logprior = realloc(logprior, sizeof(double) * n);
  loglik = realloc(loglik, sizeof(double) * n);
  if (!theta || !logprior || !loglik) return fail("tell: out of memory for %g points", n);
  memcpy(theta, th, sizeof(double) * (size_t)n * d);
  for (int i = 0; i < n; i++) {
    logprior[i] = lp[i];
    loglik[i] = status[i] == 0 ? ll[i] : -INFINITY;
  }
  told = 1;
  return 0;
}

EXPORT("kinfer_method_done") int32_t kinfer_method_done(void) { return told; }

/* draws samples resampled with weights exp(log L − max log L). */
EXPORT("kinfer_method_samples") int64_t kinfer_method_samples(void) {
  if (!told) return 0;
  double best = -INFINITY, total = 0;
  for (int i = 0; i < draws; i++) best = fmax(best, loglik[i]);
  double *cum = malloc(sizeof(double) * draws);
  out = realloc(out, sizeof(double) * (size_t)draws * (d + 2));
  if (!cum || !out) return fail("samples: out of memory%g", 0), 0;
  for (int i = 0; i < draws; i++) cum[i] = total += exp(loglik[i] - best);
  if (!(total > 0)) return free(cum), 0;
  for (int s = 0; s < draws; s++) {
    double u = uniform() * total;
    int lo = 0, hi = draws - 1; /* the first i with cum[i] > u */
    while (lo < hi) {
      int mid = (lo + hi) / 2;
      if (cum[mid] <= u) lo = mid + 1; else hi = mid;
    }
    double *row = out + (size_t)s * (d + 2);
    memcpy(row, theta + (size_t)lo * d, sizeof(double) * d);
    row[d] = logprior[lo];
    row[d + 1] = loglik[lo];
  }
  free(cum);
  return span(out, (uint32_t)draws);
}

EXPORT("kinfer_method_report") int64_t kinfer_method_report(void) { return 0; }
`,
	build.LangRust: `//! [%.Name%]: a kinfer method plugin, made by kinfer new: sampling importance
//! resampling (Rubin 1988, "Using the SIR algorithm to simulate posterior
//! distributions"): it asks the host for draws points from the prior,
//! weights each by its likelihood and resamples draws of them with those
//! weights (replace it with your sampler or optimiser). Contract:
//! abi/ABI.md §6.3; the SDK is the crate kinfer (sdk/rust), carried in the
//! kinfer binary.
//!
//!   kinfer build .           compiles [%.Wasm%] (rustc for wasm32-unknown-unknown)
//!   kinfer run study.toml    uses it on the builtin ligament model
//!   sh test.sh               both, and checks the result against truth.json

use kinfer::{Batch, Method, Results, Setting, Spec};

struct Sir {
    draws: usize,
    d: usize,
    rng: u64,
    theta: Vec<f64>,
    log_prior: Vec<f64>,
    log_lik: Vec<f64>,
    done: bool,
}

impl Sir {
    /// splitmix64 (Steele, Lea & Flood 2014): a uniform in [0, 1).
    fn uniform(&mut self) -> f64 {
        self.rng = self.rng.wrapping_add(0x9e3779b97f4a7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

impl Method for Sir {
    const SPEC: Spec = Spec::method("[%.Name%]")
        .version("0.1.0")
        .doc("sampling importance resampling from the prior")
        // prior_draws: its weights make a posterior only of genuine prior
        // draws, so a study's init rows are refused for it (ABI.md §6.3).
        .capabilities(&["prior_draws"])
        .settings(&[Setting::new("draws", 10000.0).doc("prior draws, and samples returned")]);

    fn new(s: &[f64]) -> Result<Self, String> {
        if !(s[0] >= 1.0 && s[0] <= 1e5 && s[0] == s[0].trunc()) {
            return Err(format!("[%.Name%]: draws must be an integer in [1, 1e5], got {}", s[0]));
        }
        Ok(Sir { draws: s[0] as usize, d: 0, rng: 0, theta: Vec::new(), log_prior: Vec::new(), log_lik: Vec::new(), done: false })
    }

    // All randomness comes from the study seed (ABI.md §8).
    fn init(&mut self, d: usize, seed: u64, _lower: &[f64], _upper: &[f64]) -> Result<(), String> {
        self.d = d;
        self.rng = seed ^ 0x5349520a;
        Ok(())
    }

    // One batch of prior draws, made by the host.
    fn ask(&mut self) -> Result<Batch, String> {
        Ok(Batch { draw: self.draws, ..Batch::default() })
    }

    fn tell(&mut self, r: &Results) -> Result<(), String> {
        self.theta = r.theta.to_vec();
        self.log_prior = r.log_prior.to_vec();
        self.log_lik = r.log_lik.iter().zip(r.status).map(|(l, s)| if *s == 0 { *l } else { f64::NEG_INFINITY }).collect();
        self.done = true;
        Ok(())
    }

    fn done(&self) -> bool {
        self.done
    }

    // draws samples resampled with weights exp(log L − max log L).
    fn samples(&mut self) -> Vec<f64> {
        let best = self.log_lik.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let mut cum = Vec::with_capacity(self.log_lik.len());
        let mut total = 0.0;
        for l in &self.log_lik {
            total += (l - best).exp();
            cum.push(total);
        }
        let mut out = Vec::new();
        if !(total > 0.0) {
            return out;
        }
        let d = self.d;
        for _ in 0..self.draws {
            let u = self.uniform() * total;
            let i = cum.partition_point(|c| *c <= u).min(cum.len() - 1);
            out.extend_from_slice(&self.theta[i * d..(i + 1) * d]);
            out.push(self.log_prior[i]);
            out.push(self.log_lik[i]);
        }
        out
    }
}

kinfer::export_method!(Sir);
`,
	build.LangAS: `// [%.Name%]: a kinfer method plugin, made by kinfer new: sampling importance
// resampling (Rubin 1988, "Using the SIR algorithm to simulate posterior
// distributions"): it asks the host for draws points from the prior, weights
// each by its likelihood and resamples draws of them with those weights
// (replace it with your sampler or optimiser). Contract: abi/ABI.md §6.3;
// the SDK is the package kinfer (sdk/assemblyscript), carried in the kinfer
// binary.
//
//   kinfer build .           compiles [%.Wasm%] (AssemblyScript's asc)
//   kinfer run study.toml    uses it on the builtin ligament model
//   sh test.sh               both, and checks the result against truth.json
import { Batch, F64s, Method, Results, Setting, Spec, serveMethod } from "kinfer";
export * from "kinfer/method"; // the ABI's exports

class Sir extends Method {
  draws: i32 = 10000;
  d: i32 = 0;
  rng: u64 = 0;
  theta: StaticArray<f64> = new StaticArray<f64>(0);
  logPrior: StaticArray<f64> = new StaticArray<f64>(0);
  logLik: StaticArray<f64> = new StaticArray<f64>(0);
  finished: bool = false;

  configure(s: F64s): string | null {
    if (!(s[0] >= 1 && s[0] <= 1e5 && s[0] == Math.trunc(s[0]))) {
      return "[%.Name%]: draws must be an integer in [1, 1e5], got " + s[0].toString();
    }
    this.draws = <i32>s[0];
    return null;
  }

  // splitmix64 (Steele, Lea & Flood 2014): a uniform in [0, 1).
  uniform(): f64 {
    this.rng += 0x9e3779b97f4a7c15;
    let z = this.rng;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
    z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
    return <f64>((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
  }

  // All randomness comes from the study seed (ABI.md §8).
  init(d: i32, seed: u64, lower: F64s, upper: F64s): string | null {
    this.d = d;
    this.rng = seed ^ 0x5349520a;
    return null;
  }

  // One batch of prior draws, made by the host.
  ask(): Batch | null {
    const b = new Batch();
    b.draw = this.draws;
    return b;
  }

  tell(r: Results): string | null {
    const n = r.n, d = r.d;
    this.theta = new StaticArray<f64>(n * d);
    this.logPrior = new StaticArray<f64>(n);
    this.logLik = new StaticArray<f64>(n);
    for (let i = 0; i < n * d; i++) this.theta[i] = r.theta[i];
    for (let i = 0; i < n; i++) {
      this.logPrior[i] = r.logPrior[i];
      this.logLik[i] = r.statusAt(i) == 0 ? r.logLik[i] : -Infinity;
    }
    this.finished = true;
    return null;
  }

  done(): bool {
    return this.finished;
  }

  // draws samples resampled with weights exp(log L − max log L).
  samples(): StaticArray<f64> {
    const n = this.logLik.length, d = this.d;
    let best = -Infinity;
    for (let i = 0; i < n; i++) best = Math.max(best, this.logLik[i]);
    const cum = new StaticArray<f64>(n);
    let total = 0.0;
    for (let i = 0; i < n; i++) {
      total += Math.exp(this.logLik[i] - best);
      cum[i] = total;
    }
    if (!(total > 0)) return new StaticArray<f64>(0);
    const out = new StaticArray<f64>(this.draws * (d + 2));
    for (let s = 0; s < this.draws; s++) {
      const u = this.uniform() * total;
      let lo = 0, hi = n - 1; // the first i with cum[i] > u
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (cum[mid] <= u) lo = mid + 1;
        else hi = mid;
      }
      for (let j = 0; j < d; j++) out[s * (d + 2) + j] = this.theta[lo * d + j];
      out[s * (d + 2) + d] = this.logPrior[lo];
      out[s * (d + 2) + d + 1] = this.logLik[lo];
    }
    return out;
  }
}

serveMethod(new Sir(), new Spec("method", "[%.Name%]")
  .withVersion("0.1.0")
  .withDoc("sampling importance resampling from the prior")
  // prior_draws: its weights make a posterior only of genuine prior
  // draws, so a study's init rows are refused for it (ABI.md §6.3).
  .capability("prior_draws")
  .setting(new Setting("draws", 10000).withDoc("prior draws, and samples returned")));
`,
}

// shellQuote is s as one word of a POSIX shell: as it is when it holds
// only characters no shell treats specially, else in single quotes (a
// single quote inside is closed, escaped and reopened).
func shellQuote(s string) string {
	// A word starting with "-" is read as an option by kinfer and sh:
	// "./-x" names the same folder (audit 18: every printed command
	// failed).
	if strings.HasPrefix(s, "-") {
		s = "./" + s
	}
	plain := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+,:@%=", r)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
