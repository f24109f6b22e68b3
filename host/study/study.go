package study

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin"
	"github.com/kinfer/kinfer/builtin/prior"
	"github.com/kinfer/kinfer/host/dataset"
	"github.com/kinfer/kinfer/host/manifest"
	"github.com/kinfer/kinfer/host/safefile"
	"github.com/kinfer/kinfer/host/tomlx"
	"github.com/kinfer/kinfer/host/wasm"
	"github.com/kinfer/kinfer/internal/guesttext"
)

// Component is a resolved model, likelihood or method: where it came from
// and its self-description.
type Component struct {
	Ref string // "builtin:NAME" or the plugin manifest path
	// Name labels the component in messages: a plugin's manifest name
	// (ABI.md §4: logs and summaries use the manifest's), a built-in's
	// name.
	Name string
	Spec abi.Spec
}

// Label is c's name in messages: Name, or the spec's name when Name is
// not set.
func (c Component) Label() string {
	if c.Name != "" {
		return c.Name
	}
	return c.Spec.Name
}

// Dataset is one [[data]] table resolved against the model.
type Dataset struct {
	Name    string
	File    string
	K       int       // rows
	X       []float64 // K×c conditions in model order
	Outputs []string  // the model outputs it observes (default of its terms)
	table   *dataset.Table
	// SHA256 is the digest of the file's bytes as loaded (run.Inputs
	// records it).
	SHA256 string
}

// column returns the named CSV column, or K NaNs if the file has none; a
// column with text in it is an error naming its first such cell.
func (ds *Dataset) column(name string) ([]float64, error) {
	if err := ds.table.CheckNumeric(name); err != nil {
		return nil, err
	}
	out := make([]float64, ds.K)
	j := ds.table.Index(name)
	for r := range out {
		out[r] = math.NaN()
		if j >= 0 {
			out[r] = ds.table.Rows[r][j]
		}
	}
	return out, nil
}

// Term is one likelihood term: a likelihood applied to some of the model's
// outputs on a dataset's conditions.
type Term struct {
	Name       string // "<likelihood>:<dataset>"
	Component  Component
	Likelihood abi.Likelihood
	Data       *Dataset
	Outputs    []string  // the model outputs the likelihood sees, in order
	OutIdx     []int     // their indices among the model's outputs
	Obs        []float64 // K×len(Outputs) observations; NaN = not observed
	Sigma      []float64 // K×len(Outputs)
}

// Study is a study file resolved and ready to run.
type Study struct {
	Path, Dir, Name string
	Seed            uint64

	ModelInfo Component
	Model     abi.Model

	// Free are the parameters θ the method explores (those with a prior),
	// in model order; FreeIdx their index in the model's parameters; Base
	// the full model vector with the fixed values filled in.
	Free    []abi.Param
	FreeIdx []int
	Base    []float64
	Priors  []prior.Dist

	// Starts are the study's initial points (init = "starts.csv"), θ over
	// the free parameters, served in order to the method's first prior-draw
	// requests.
	Starts [][]float64
	// InitFile is the init file Starts were read from ("" when they are a
	// previous stage's end, or there are none).
	InitFile string
	// SHA256 and InitSHA256 are the digests of the study file's and the
	// init file's bytes as loaded (run.Inputs records them: a second read
	// could see a file replaced meanwhile, audit 17).
	SHA256, InitSHA256 string

	// Transforms reparameterise some free parameters for the method
	// (θ = T(x), the study's [transform] table; see transform.go). XParams
	// are the coordinates the method explores: Free itself without
	// transforms, else the same names with the x-bounds.
	Transforms []Transform
	XParams    []abi.Param

	// TransformWarnings say what a study's transforms cut from the
	// parameters' supports (summary.json transform.warnings; kinfer run
	// prints them).
	TransformWarnings []string
	// PriorWarnings name the priors the model's bounds cut for the most
	// part (summary.json prior_warnings; kinfer run and validate print
	// them).
	PriorWarnings []string
	// PluginMemory lists the study's plugins with their memory limits
	// and instance counts (Study.PluginBytes, checked against the memory
	// budget before a run).
	PluginMemory []PluginMemory
	// Inherited are the parameters fixed at a previous stage's values
	// (Options.Previous).
	Inherited []string
	// PreviousUsed are the previous stage's values this study used (those
	// of Inherited, and those its start was taken from), and
	// PreviousMissing the free parameters the previous stage did not have,
	// whose start is their default: together, all that its results depend
	// on in Options.Previous.
	PreviousUsed    map[string]float64
	PreviousMissing []string

	Data []*Dataset
	// NoData: the study has no [[data]] table (a propagation study); Data
	// then holds one dataset named "conditions", the rows of its
	// [conditions] table (conditions.go), which has no observations.
	NoData bool
	// Terms are the likelihood terms; none in a propagation study (no
	// [[likelihood]], for a method with abi.CapPropagation).
	Terms []*Term
	// Constraints are the soft constraints ([[constraint]], constraint.go),
	// whose residuals follow the terms'.
	Constraints []*Constraint
	// JacobianMode is the jacobian key: JacobianAuto, JacobianAnalytic,
	// JacobianForward or JacobianCentral.
	JacobianMode string

	MethodInfo Component
	Method     abi.Method

	closers []io.Closer
	// certs are the determinism checks asked for by certify = true,
	// run once every component is loaded.
	certs []func(ctx context.Context) error
	// Certified lists the plugins certify = true checked, with the checks
	// (summary.json certified; kinfer run prints them).
	Certified []string
	// dataLeft is what remains of dataCap while the study loads.
	dataLeft int64
	// dataCap bounds the study's data: MaxDataBytes, or half the memory
	// budget when that is less (data is live through a run, and the
	// collector lets the heap grow to twice what is live).
	dataCap int64
	// budget is Options.MemoryBudget (0: none), which certification is
	// charged to.
	budget int64
	// methodKey locates a method's refusal at Init in the study: where the
	// [method] table sets the one setting the message names, else the
	// table (LocateMethodError).
	methodKey func(error) error
}

// MaxDataBytes bounds the memory of a study's data: its tables (including
// the init file's; dataset.TableBytes), the datasets' condition matrices
// and each likelihood term's observations and σ, 8 bytes per value.
const MaxDataBytes = 512 << 20

// maxDataBytes is MaxDataBytes, lowered by tests.
var maxDataBytes int64 = MaxDataBytes

// charge takes n bytes from the data budget, or returns an error at key.
func (s *Study) charge(d *tomlx.Decoded, key string, n int64, what string) error {
	if n > s.dataLeft {
		return d.Errorf(key, "%s would take %s in memory, and the study's data may take at most %s in all (%s left)%s",
			what, safefile.Bytes(n), safefile.Bytes(s.dataCap), safefile.Bytes(s.dataLeft), s.budgetHint())
	}
	s.dataLeft -= n
	return nil
}

// DataBytes is the memory the study's data takes, as charged while it
// loaded (tables, conditions, observations and σ, initial points).
func (s *Study) DataBytes() int64 { return s.dataCap - s.dataLeft }

// budgetHint says, when the memory budget is what bounds the study's data,
// how to lift it.
func (s *Study) budgetHint() string {
	if s.dataCap >= maxDataBytes {
		return ""
	}
	return fmt.Sprintf(" (half the memory budget of %s, since the collector lets the heap grow to twice its data: raise --memory-budget)", safefile.Bytes(s.budget))
}

// dataErr adds the budget hint to a data file refused for its memory.
func (s *Study) dataErr(err error) error {
	if errors.Is(err, dataset.ErrTooManyRows) {
		if h := s.budgetHint(); h != "" {
			return fmt.Errorf("%w%s", err, h)
		}
	}
	return err
}

// Options configure Load.
type Options struct {
	Workers int           // instances per plugin model/likelihood
	Runtime *wasm.Runtime // needed only when the study names plugins
	// Interrupt, if set, is the context of everything a signal must be able
	// to stop: the compilation of every plugin and the plugin models and
	// likelihoods, whose calls run under it (cancelling it interrupts a call
	// in progress). Load returns its error once it is cancelled. A method
	// plugin is created under Load's own ctx instead, so that it stays
	// usable after Interrupt is cancelled and can still save its state.
	// nil: Load's ctx for everything.
	Interrupt context.Context
	// Previous are the parameter values a previous stage of a multi-stage
	// study ended with (its best θ, by name). A parameter the study gives
	// neither a prior nor a fixed value is then fixed at its previous value
	// (instead of being an error), and without an init file the method
	// starts from the previous values of the free parameters.
	Previous map[string]float64
	// PreviousGuessed says Previous holds stand-ins (kinfer validate of a
	// multi-stage study: the defaults, not a stage's result), so no start
	// is made from them and none is checked against the priors.
	PreviousGuessed bool
	// MemoryBudget, when > 0, caps the instances of each plugin model or
	// likelihood so that they take at most half of it (PluginGrowFactor ×
	// memory_mib each): workers beyond share the instances, and results do
	// not change (audit 5: 8 workers of a default-memory plugin took 1.7 GB
	// under a 1 GiB budget, 12 crashed the host).
	MemoryBudget int64
	// IgnoreTrust, when not empty, says why the study's trusted = true is
	// not honoured here and how to honour it: a study named by a run
	// directory (kinfer report, analyze, run --verify) may come from
	// elsewhere, and its trusted = true lifted the sandbox's limits for a
	// plugin that then spun forever (audit 21).
	IgnoreTrust string
}

// pluginInstances is the number of instances of a plugin model or
// likelihood of mib MiB of memory: o.Workers, capped by o.MemoryBudget.
func (o Options) pluginInstances(mib int) int {
	n := max(o.Workers, 1)
	if o.MemoryBudget > 0 && mib > 0 {
		n = min(n, max(1, int(o.MemoryBudget/2/(PluginGrowFactor*int64(mib)<<20))))
	}
	return n
}

// interrupt is o.Interrupt, or ctx when it is not set.
func (o Options) interrupt(ctx context.Context) context.Context {
	if o.Interrupt != nil {
		return o.Interrupt
	}
	return ctx
}

// Close releases the plugins' instances.
func (s *Study) Close() error {
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- { // instances before their plugin
		errs = append(errs, s.closers[i].Close())
	}
	s.closers = nil
	return errors.Join(errs...)
}

// Decode reads and strictly decodes a study file without resolving it.
func Decode(path string) (*File, *tomlx.Decoded, error) {
	// The path is recorded (summary.json, JSON strings, which hold
	// UTF-8) and printed: a name with invalid UTF-8 was recorded with
	// U+FFFD and the run could never be verified (audit 12).
	if strings.IndexFunc(path, badNameRune) >= 0 {
		return nil, nil, fmt.Errorf("%s: the study's path has a control character or invalid UTF-8 (its runs record and print it): rename the file or its folder", guesttext.Escape(path))
	}
	var f File
	// The component tables hold settings checked against the component's
	// spec (settingValues), not against File; [transform] is checked by
	// loadTransforms.
	d, err := tomlx.DecodeFile(path, &f, "model", "likelihood", "method", "transform", "conditions", "data.columns")
	if err != nil {
		return nil, nil, err
	}
	return &f, d, nil
}

// Load reads, validates and resolves the study at path. On error nothing
// stays open.
func Load(ctx context.Context, path string, o Options) (_ *Study, err error) {
	f, d, err := Decode(path)
	if err != nil {
		return nil, err
	}
	s := &Study{Path: path, Dir: filepath.Dir(path), Name: f.Name, Seed: 1, dataCap: maxDataBytes, budget: o.MemoryBudget, SHA256: d.SHA256}
	if o.MemoryBudget > 0 {
		s.dataCap = min(s.dataCap, o.MemoryBudget/2)
	}
	s.dataLeft = s.dataCap
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if f.Name == "" {
		return nil, &tomlx.Error{File: path, Key: "name", Msg: "missing required field"}
	}
	if err := CheckName(d, f.Name); err != nil {
		return nil, err
	}
	if d.Has("stages") {
		return nil, d.Errorf("stages", "a multi-stage study is run stage by stage by `kinfer run`; each of its stages is a study file of its own")
	}
	if f.Seed != nil {
		if *f.Seed < 0 {
			return nil, d.Errorf("seed", "seed must be ≥ 0")
		}
		s.Seed = uint64(*f.Seed)
	}
	if o.Workers < 1 {
		o.Workers = 1
	}
	ictx := o.interrupt(ctx)
	for _, step := range []func() error{
		func() error { return s.loadModel(ictx, f, d, o) },
		func() error { return s.loadParams(f, d, o) },
		func() error { return s.loadTransforms(f, d) },
		func() error { return s.loadData(f, d) },
		func() error { return s.checkSurrogateConditions(d) },
		func() error { return s.loadTerms(ictx, f, d, o) },
		func() error { return s.loadConstraints(f, d) },
		func() error { return s.loadMethod(ctx, ictx, f, d, o) },
		// After the method: one that needs genuine prior draws takes no
		// start from a previous stage.
		func() error { return s.loadStarts(f, d, o) },
		func() error { return s.checkPropagation(f, d) },
		func() error { return s.checkPriorDraws(f, d) },
		func() error { return s.checkLeastSquares(f, d) },
	} {
		if err := context.Cause(ictx); err != nil {
			return nil, fmt.Errorf("loading %s: %w", path, err)
		}
		if err := step(); err != nil {
			if cerr := context.Cause(ictx); cerr != nil && !errors.Is(err, cerr) {
				err = fmt.Errorf("%w (%w)", cerr, err)
			}
			return nil, err
		}
	}
	for _, c := range s.certs {
		if err := c(ictx); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// certifyLater queues the determinism check of plugin p (certify = true in
// its table), with the component's settings and options filled in by opts
// once the study's data are loaded.
func (s *Study) certifyLater(d *tomlx.Decoded, r componentRef, p *wasm.Plugin, vals []float64, opts func(*wasm.CertifyOptions)) {
	if !r.certify {
		return
	}
	s.certs = append(s.certs, func(ctx context.Context) error {
		// Certification runs two instances of the plugin: charged to the
		// memory budget first, as the run's instances are (audit 8: a
		// study refused for its budget had first taken 2.9 GB certifying).
		if need := 2 * PluginGrowFactor * int64(p.Manifest.Limits.MemoryMiB) << 20; s.budget > 0 && p.Manifest.Limits.MemoryMiB > manifest.DefaultMemoryMiB && need > s.budget {
			return fmt.Errorf("%s: certifying plugin %s takes two instances of up to memory_mib %d each (×%d, since a growing memory is copied), about %s, more than the memory budget of %s: lower memory_mib or raise --memory-budget",
				keyAt(d, r.table+".certify"), p.Manifest.Name, p.Manifest.Limits.MemoryMiB, PluginGrowFactor, safefile.Bytes(need), safefile.Bytes(s.budget))
		}
		o := wasm.CertifyOptions{Settings: vals, Seed: s.Seed}
		if opts != nil {
			opts(&o)
		}
		c, err := p.Certify(ctx, o)
		if err != nil {
			return fmt.Errorf("%s: %w", keyAt(d, r.table+".certify"), err)
		}
		// A run's outputs say its plugin was certified, and how (audit 4:
		// certify = true left no trace).
		s.Certified = append(s.Certified, fmt.Sprintf("%s (%s): %s", p.Manifest.Name, r.table, strings.Join(c.Checks, "; ")))
		return nil
	})
}

func (s *Study) resolvePath(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(s.Dir, p)
}

// plugin loads a plugin manifest named by a component table and checks its
// kind; ctx is the context of the compilation and first instantiation.
func (s *Study) plugin(ctx context.Context, d *tomlx.Decoded, r componentRef, kind abi.Kind, o Options) (*wasm.Plugin, error) {
	m, err := manifest.Load(s.resolvePath(r.plugin))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", keyAt(d, r.table+".plugin"), err)
	}
	if m.Kind != kind {
		return nil, d.Errorf(r.table+".plugin", "plugin %s is a %s, but [%s] needs a %s", m.Name, m.Kind, strings.Split(r.table, "[")[0], kind)
	}
	// A plugin's own manifest cannot switch off or stretch the sandbox's
	// hang protection (no timeout or fuel limit, or more than the maxima):
	// that is the study's decision (ABI.md §9).
	if why := m.Limits.NeedsTrust(); len(why) > 0 && r.trusted && o.IgnoreTrust != "" {
		return nil, d.Errorf(r.table+".plugin", "plugin %s asks for %s in %s, which only trusted code may, and this table's trusted = true is not honoured here: %s",
			m.Name, strings.Join(why, " and "), m.Path, o.IgnoreTrust)
	}
	if why := m.Limits.NeedsTrust(); len(why) > 0 && !r.trusted {
		return nil, d.Errorf(r.table+".plugin", "plugin %s asks for %s in %s, which only trusted code may: add trusted = true to this table if you trust it",
			m.Name, strings.Join(why, " and "), m.Path)
	}
	if o.Runtime == nil {
		return nil, d.Errorf(r.table+".plugin", "plugins need a WebAssembly runtime (internal error: none given)")
	}
	p, err := o.Runtime.Load(ctx, m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", keyAt(d, r.table+".plugin"), err)
	}
	s.closers = append(s.closers, pluginCloser{p})
	mib := m.Limits.MemoryMiB
	if mib == 0 {
		mib = manifest.DefaultMemoryMiB
	}
	inst := 1 // a method runs on one instance; models and likelihoods on one per worker
	if kind != abi.KindMethod {
		inst = o.pluginInstances(mib)
	}
	s.PluginMemory = append(s.PluginMemory, PluginMemory{Table: r.table, Name: m.Name, MiB: mib, Instances: inst})
	return p, nil
}

// PluginMemory is what one plugin of a study may hold: up to MiB of linear
// memory (its manifest's memory_mib) in each of Instances instances.
type PluginMemory struct {
	Table, Name string
	MiB         int
	Instances   int
}

// PluginGrowFactor: the host memory one instance of a plugin may take per
// byte of its linear memory. The runtime grows a memory by copying it
// into a larger one, so the old and the new copy live at once, and freed
// copies wait for the garbage collector (a 4 GiB guest took ≈ 12 GB of
// host memory when every page was touched).
const PluginGrowFactor = 2

// PluginBytes is the host memory the study's plugins may take:
// PluginGrowFactor × memory_mib × instances, summed.
func (s *Study) PluginBytes() int64 {
	var b int64
	for _, p := range s.PluginMemory {
		b += PluginGrowFactor * int64(p.MiB) << 20 * int64(p.Instances)
	}
	return b
}

// pluginCloser releases a loaded plugin's compiled module with the study.
type pluginCloser struct{ p *wasm.Plugin }

func (c pluginCloser) Close() error { return c.p.Close(context.Background()) }

// settingErr is a built-in component's refusal of its settings, located at
// the one setting of spec the message names (as a whole word) and the table
// gives, else at the table.
func settingErr(d *tomlx.Decoded, table string, spec abi.Spec, err error) error {
	msg := err.Error()
	found := ""
	for _, st := range spec.Settings {
		key := table + "." + st.Name
		if d.Line(key) == d.Line(table) || !hasWord(msg, st.Name) {
			continue
		}
		if found != "" {
			return d.Wrap(table, err)
		}
		found = key
	}
	if found == "" {
		found = table
	}
	return d.Wrap(found, err)
}

// pluginSettingErr locates a plugin's refusal of its settings
// (*wasm.SettingsError) in the study as settingErr does for a built-in;
// any other error passes unchanged.
func pluginSettingErr(d *tomlx.Decoded, table string, spec abi.Spec, err error) error {
	var se *wasm.SettingsError
	if !errors.As(err, &se) {
		return err
	}
	return settingErr(d, table, spec, err)
}

// hasWord reports whether w occurs in s not inside a longer identifier.
func hasWord(s, w string) bool {
	ident := func(c byte) bool {
		return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		if (j == 0 || !ident(s[j-1])) && (j+len(w) == len(s) || !ident(s[j+len(w)])) {
			return true
		}
		i = j + 1
	}
}

func keyAt(d *tomlx.Decoded, key string) string {
	return fmt.Sprintf("%s:%d: key %q", d.File, d.Line(key), key)
}

func (s *Study) loadModel(ctx context.Context, f *File, d *tomlx.Decoded, o Options) error {
	r, err := parseRef(d, "model", f.Model)
	if err != nil {
		return err
	}
	if r.plugin != "" {
		p, err := s.plugin(ctx, d, r, abi.KindModel, o)
		if err != nil {
			return err
		}
		vals, err := settingValues(d, r, p.Spec)
		if err != nil {
			return err
		}
		m, err := p.Model(ctx, vals, o.pluginInstances(p.Manifest.Limits.MemoryMiB))
		if err != nil {
			return pluginSettingErr(d, "model", p.Spec, err)
		}
		s.certifyLater(d, r, p, vals, func(c *wasm.CertifyOptions) {
			if len(s.Data) > 0 {
				c.X, c.Rows = s.Data[0].X, s.Data[0].K // the first dataset's conditions
			}
		})
		s.closers = append(s.closers, m.(io.Closer))
		s.Model, s.ModelInfo = m, Component{Ref: s.resolvePath(r.plugin), Name: p.Manifest.Name, Spec: p.Spec}
		return nil
	}
	if r.use == SurrogateUse {
		return s.loadSurrogate(d, r, o.MemoryBudget)
	}
	e, ok := builtin.Models[r.use]
	if !ok {
		return d.Errorf("model.use", "no built-in model %q (built-ins: %s, and %q with a file)", r.use, strings.Join(builtin.Names(builtin.Models), ", "), SurrogateUse)
	}
	vals, err := settingValues(d, r, e.Spec)
	if err != nil {
		return err
	}
	m, err := e.New(vals)
	if err != nil {
		return settingErr(d, "model", e.Spec, err)
	}
	s.Model, s.ModelInfo = m, Component{Ref: "builtin:" + r.use, Name: r.use, Spec: e.Spec}
	return nil
}

func (s *Study) loadParams(f *File, d *tomlx.Decoded, o Options) error {
	spec := s.ModelInfo.Spec
	for name := range f.Prior {
		if spec.ParamIndex(name) < 0 {
			return d.Errorf("prior."+name, "model %q has no parameter %q (parameters: %s)", spec.Name, name, paramNames(spec))
		}
	}
	for name, v := range f.Fixed {
		i := spec.ParamIndex(name)
		if i < 0 {
			return d.Errorf("fixed."+name, "model %q has no parameter %q (parameters: %s)", spec.Name, name, paramNames(spec))
		}
		if _, both := f.Prior[name]; both {
			return d.Errorf("fixed."+name, "parameter %q has both a prior and a fixed value", name)
		}
		if p := spec.Params[i]; !(v >= p.Lower && v <= p.Upper) {
			return d.Errorf("fixed."+name, "fixed %s = %g is outside the model's bounds [%g, %g]", name, v, p.Lower, p.Upper)
		}
	}
	s.Base = make([]float64, len(spec.Params))
	var missing []string
	for i, p := range spec.Params {
		s.Base[i] = p.Default
		if v, ok := f.Fixed[p.Name]; ok {
			s.Base[i] = v
			continue
		}
		pr, ok := f.Prior[p.Name]
		if !ok {
			if v, prev := o.Previous[p.Name]; prev {
				if !(v >= p.Lower && v <= p.Upper) {
					return d.Errorf("prior", "parameter %s is left out, so fixed at the previous stage's value %g, which is outside the model's bounds [%g, %g]", p.Name, v, p.Lower, p.Upper)
				}
				s.Base[i] = v // fixed at the previous stage's result
				s.Inherited = append(s.Inherited, p.Name)
				s.usePrevious(p.Name, v)
				continue
			}
			missing = append(missing, p.Name)
			continue
		}
		key := "prior." + p.Name
		if len(pr) != 1 {
			return d.Errorf(key, "give one distribution, e.g. %s = { uniform = [%g, %g] }", p.Name, p.Lower, p.Upper)
		}
		for kind, args := range pr {
			dist, err := prior.FromTOML(kind, args)
			if err != nil {
				return d.Errorf(key, "%v", err)
			}
			lo, hi := dist.Support()
			if lo < p.Lower || hi > p.Upper {
				// The model's bounds truncate the prior (see RATIONALE.md).
				lo, hi = math.Max(lo, p.Lower), math.Min(hi, p.Upper)
				if !(lo < hi) {
					return d.Errorf(key, "prior %s has no mass inside the model's bounds [%g, %g]", dist, p.Lower, p.Upper)
				}
				_, mass, err := prior.Truncate(dist, lo, hi)
				if err != nil {
					return d.Errorf(key, "%v, the model's bounds", err)
				}
				// Most of a prior cut away, and not a vague one centred
				// in the bounds: the bounds, not the prior, then decide
				// where the posterior may go (audit 4).
				med := dist.Quantile(0.5)
				if mass < 0.5 && (strings.HasPrefix(dist.String(), "uniform") || med < p.Lower || med > p.Upper) {
					s.PriorWarnings = append(s.PriorWarnings, fmt.Sprintf("%s: the prior %s has %.3g %% of its mass inside the model's bounds [%g, %g] and is truncated to [%g, %g]; a posterior against that bound is the bounds' doing, not the data's", p.Name, dist, 100*mass, p.Lower, p.Upper, lo, hi))
				}
			}
			s.Priors = append(s.Priors, dist)
			q := p
			q.Lower, q.Upper = lo, hi
			s.Free = append(s.Free, q)
			s.FreeIdx = append(s.FreeIdx, i)
		}
	}
	if len(missing) > 0 {
		return &tomlx.Error{File: d.File, Line: d.Line("prior"), Key: "prior",
			Msg: fmt.Sprintf("parameters %s of model %q have neither a prior nor a fixed value", nameList(missing), spec.Name)}
	}
	if len(s.Free) == 0 {
		return &tomlx.Error{File: d.File, Key: "prior", Msg: "no free parameters: give at least one a prior"}
	}
	return nil
}

func paramNames(s abi.Spec) string {
	n := make([]string, len(s.Params))
	for i, p := range s.Params {
		n[i] = p.Name
	}
	return nameList(n)
}

// maxListed is how many names an error message lists: a model may have
// thousands (a surrogate file's provenance names its inputs).
const maxListed = 20

// nameList joins names with ", ", the first maxListed and a count of the
// rest.
func nameList(names []string) string {
	if len(names) <= maxListed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s … and %d more", strings.Join(names[:maxListed], ", "), len(names)-maxListed)
}

func (s *Study) loadData(f *File, d *tomlx.Decoded) error {
	spec := s.ModelInfo.Spec
	if len(f.Data) == 0 {
		return s.loadConditions(f, d)
	}
	if f.Conditions != nil {
		return d.Errorf("conditions", "[conditions] is for a study without [[data]]; with data the conditions are the data files' columns")
	}
	conds := make([]string, len(spec.Conditions))
	for i, c := range spec.Conditions {
		conds[i] = c.Name
	}
	for i, df := range f.Data {
		tbl := fmt.Sprintf("data[%d]", i)
		if df.Name == "" || df.File == "" {
			return &tomlx.Error{File: d.File, Line: d.Line(tbl), Key: tbl, Msg: "a [[data]] table needs name and file"}
		}
		// Printed by run, analyze and report, and written into
		// report.html: no terminal escapes (audit 9: a dataset named with
		// ESC sequences retitled and recoloured the terminal).
		for _, k := range []struct{ key, v string }{{"name", df.Name}, {"file", df.File}} {
			if strings.IndexFunc(k.v, badNameRune) >= 0 {
				return d.Errorf(tbl+"."+k.key, "%s %q has a control character or invalid UTF-8", k.key, k.v)
			}
		}
		for _, o := range s.Data {
			if o.Name == df.Name {
				return d.Errorf(tbl+".name", "duplicate dataset name %q", df.Name)
			}
		}
		t, err := dataset.ReadDataMax(s.resolvePath(df.File), s.dataLeft)
		if err != nil {
			return fmt.Errorf("%s: %w", keyAt(d, tbl+".file"), s.dataErr(err))
		}
		columns, err := columnsTable(d, tbl, df.Columns)
		if err != nil {
			return err
		}
		if len(columns) > 0 {
			names := make([]string, 0, len(columns))
			for k := range columns {
				// The model's names only: a misspelt one would leave the
				// file's column of the right name in use, silently.
				o, isSigma := strings.CutPrefix(k, "sigma_")
				if !slices.Contains(conds, k) && outputIndex(spec, k) < 0 && !(isSigma && outputIndex(spec, o) >= 0) {
					return d.Errorf(tbl+".columns", "model %q has no condition or output %q (conditions: %s; outputs: %s; or sigma_<output>)", spec.Name, k, nameList(conds), outputNames(spec))
				}
				names = append(names, k)
			}
			sort.Strings(names)
			pairs := make([][2]string, len(names))
			for i, k := range names {
				pairs[i] = [2]string{k, columns[k]}
			}
			if err := t.Rename(pairs); err != nil {
				return fmt.Errorf("%s: %w", keyAt(d, tbl+".columns"), err)
			}
		}
		if err := s.charge(d, tbl+".file", t.Bytes()+int64(len(t.Rows))*int64(len(conds))*8, "dataset "+df.Name); err != nil {
			return err
		}
		ds := &Dataset{Name: df.Name, File: t.File, K: len(t.Rows), table: t, SHA256: t.SHA256}
		if ds.X, err = t.Matrix(conds); err != nil {
			return fmt.Errorf("%s: model %q needs its condition columns: %w", keyAt(d, tbl+".file"), spec.Name, err)
		}
		for j, x := range ds.X {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return t.Errorf(j/len(conds), conds[j%len(conds)], "condition is empty or not finite")
			}
		}
		// A σ column must name a model output and hold positive numbers:
		// a misspelt sigma_ column would otherwise fall back silently to
		// the study's σ.
		for c, name := range t.Columns {
			out, ok := strings.CutPrefix(name, "sigma_")
			if !ok {
				continue
			}
			if outputIndex(spec, out) < 0 {
				return t.Errorf(-1, name, "model %q has no output %q (outputs: %s); a σ column is named sigma_<output>", spec.Name, out, outputNames(spec))
			}
			for r, row := range t.Rows {
				if v := row[c]; !math.IsNaN(v) && !(v > 0 && !math.IsInf(v, 0)) {
					return t.Errorf(r, name, "σ must be a positive number, got %g", v)
				}
			}
		}
		outs := df.Outputs
		if len(outs) == 0 {
			for _, o := range spec.Outputs {
				if t.Index(o.Name) >= 0 {
					outs = append(outs, o.Name)
				}
			}
			if len(outs) == 0 {
				return fmt.Errorf("%s: %s has none of model %q's output columns (%s)", keyAt(d, tbl+".file"), t.File, spec.Name, outputNames(spec))
			}
		}
		for k, o := range outs {
			if outputIndex(spec, o) < 0 {
				return d.Errorf(tbl+".outputs", "model %q has no output %q (outputs: %s)", spec.Name, o, outputNames(spec))
			}
			if slices.Contains(outs[:k], o) {
				return d.Errorf(tbl+".outputs", "output %q is named twice (each observation would count twice)", o)
			}
			if t.Index(o) < 0 {
				return fmt.Errorf("%s: %s has no column %q", keyAt(d, tbl+".outputs"), t.File, o)
			}
		}
		// An observation is a finite number, or missing (an empty cell or
		// nan); an infinite one would make every evaluation fail. (A
		// dataset without any observation gives condition rows, e.g. to
		// kinfer design; kinfer run refuses a study whose likelihood terms
		// observe nothing.)
		for _, o := range outs {
			c := t.Index(o)
			for r, row := range t.Rows {
				if v := row[c]; math.IsInf(v, 0) {
					return t.Errorf(r, o, "observation %g is not finite; leave the cell empty or write nan for a missing observation", v)
				}
			}
		}
		ds.Outputs = outs
		s.Data = append(s.Data, ds)
	}
	return nil
}

func outputIndex(s abi.Spec, name string) int {
	for i, o := range s.Outputs {
		if o.Name == name {
			return i
		}
	}
	return -1
}

func outputNames(s abi.Spec) string {
	n := make([]string, len(s.Outputs))
	for i, p := range s.Outputs {
		n[i] = p.Name
	}
	return nameList(n)
}

func (s *Study) loadTerms(ctx context.Context, f *File, d *tomlx.Decoded, o Options) error {
	if len(f.Likelihood) == 0 {
		return nil // a propagation study, if the method is one (checkPropagation)
	}
	if s.NoData {
		return d.Errorf("likelihood[0]", "a [[likelihood]] compares the model with observations, but the study has no [[data]] table: add one (name, file), or drop the likelihood for a propagation study")
	}
	for i, raw := range f.Likelihood {
		tbl := fmt.Sprintf("likelihood[%d]", i)
		r, err := parseRef(d, tbl, raw, "data", "sigma", "outputs")
		if err != nil {
			return err
		}
		dataName, _ := raw["data"].(string)
		var ds *Dataset
		for _, x := range s.Data {
			if x.Name == dataName {
				ds = x
			}
		}
		if ds == nil {
			names := make([]string, len(s.Data))
			for k, x := range s.Data {
				names[k] = x.Name
			}
			switch {
			case dataName == "" && len(s.Data) == 1:
				ds = s.Data[0]
			case dataName == "" && raw["data"] == nil:
				return d.Errorf(tbl, "the study has %d [[data]] tables (%s): name the one this term compares with, data = \"NAME\"", len(s.Data), nameList(names))
			default:
				return d.Errorf(tbl+".data", "data = %q names no [[data]] table (tables: %s)", dataName, nameList(names))
			}
		}
		t := &Term{Data: ds, Outputs: ds.Outputs}
		if v, ok := raw["outputs"]; ok {
			list, ok := v.([]any)
			t.Outputs = nil
			for _, x := range list {
				if name, isStr := x.(string); isStr {
					t.Outputs = append(t.Outputs, name)
				}
			}
			if !ok || len(t.Outputs) == 0 || len(t.Outputs) != len(list) {
				return d.Errorf(tbl+".outputs", "outputs must be a non-empty list of the model's output names")
			}
		}
		mspec := s.ModelInfo.Spec
		for k, o := range t.Outputs {
			j := outputIndex(mspec, o)
			if j < 0 {
				return d.Errorf(tbl+".outputs", "model %q has no output %q (outputs: %s)", mspec.Name, o, outputNames(mspec))
			}
			if slices.Contains(t.Outputs[:k], o) {
				return d.Errorf(tbl+".outputs", "output %q is named twice (each observation would count twice)", o)
			}
			t.OutIdx = append(t.OutIdx, j)
			// A dataset that lists its observed outputs leaves the others
			// out; a term naming one of those whose column the file has
			// would read it as observations all the same (audit 9: a
			// channel excluded from outputs = ["p"] fitted as data).
			// Which was meant cannot be told, so neither is chosen.
			if di := dsIndex(s, ds); di < len(f.Data) && len(f.Data[di].Outputs) > 0 && !slices.Contains(ds.Outputs, o) && ds.table.Index(o) >= 0 {
				return d.Errorf(tbl+".outputs", "output %q is not among dataset %q's observed outputs (%s), but its file %s has a %q column: add %q to the dataset's outputs to use that column as observations, or rename the column to leave %q unobserved in this term",
					o, ds.Name, nameList(ds.Outputs), ds.File, o, o, o)
			}
		}
		// Obs and Sigma, K×m each.
		if err := s.charge(d, tbl, 2*8*int64(ds.K)*int64(len(t.Outputs)), fmt.Sprintf("likelihood term %d's observations and σ", i+1)); err != nil {
			return err
		}
		if t.Obs, err = interleave(ds, t.Outputs, ""); err != nil {
			return fmt.Errorf("%s: %w", keyAt(d, fmt.Sprintf("data[%d].file", dsIndex(s, ds))), err)
		}
		var spec abi.Spec
		if r.plugin != "" {
			p, err := s.plugin(ctx, d, r, abi.KindLikelihood, o)
			if err != nil {
				return err
			}
			vals, err := settingValues(d, r, p.Spec)
			if err != nil {
				return err
			}
			if t.Likelihood, err = p.Likelihood(ctx, vals, len(t.Outputs), o.pluginInstances(p.Manifest.Limits.MemoryMiB)); err != nil {
				return pluginSettingErr(d, tbl, p.Spec, err)
			}
			m := len(t.Outputs)
			s.certifyLater(d, r, p, vals, func(c *wasm.CertifyOptions) { c.Outputs = m })
			s.closers = append(s.closers, t.Likelihood.(io.Closer))
			spec, t.Component = p.Spec, Component{Ref: s.resolvePath(r.plugin), Name: p.Manifest.Name, Spec: p.Spec}
		} else {
			e, ok := builtin.Likelihoods[r.use]
			if !ok {
				return d.Errorf(tbl+".use", "no built-in likelihood %q (built-ins: %s)", r.use, strings.Join(builtin.Names(builtin.Likelihoods), ", "))
			}
			vals, err := settingValues(d, r, e.Spec)
			if err != nil {
				return err
			}
			if t.Likelihood, err = e.New(vals); err != nil {
				return settingErr(d, tbl, e.Spec, err)
			}
			spec, t.Component = e.Spec, Component{Ref: "builtin:" + r.use, Name: r.use, Spec: e.Spec}
		}
		t.Name = spec.Name + ":" + ds.Name
		if t.Sigma, err = sigmaFor(d, tbl+".sigma", raw["sigma"], t, !spec.Has(abi.CapSigmaFree)); err != nil {
			return err
		}
		// A residual (y − obs)/σ that overflows at the observation itself
		// (obs = 1e308, or σ = 1e-320) would make every evaluation
		// non-finite.
		for k, o := range t.Obs {
			// |obs/σ| beyond 1e150: the residual's square, in the
			// log-likelihood, overflows too.
			if sg := t.Sigma[k]; !math.IsNaN(o) && !math.IsNaN(sg) && !(math.Abs(o/sg) <= 1e150) {
				m := len(t.Outputs)
				return fmt.Errorf("%s: row %d, output %s: observation %g over σ %g is beyond 1e150, so the squared residual ((y − obs)/σ)² overflows for any y not close to it; rescale the data or σ", keyAt(d, tbl), k/m+1, t.Outputs[k%m], o, sg)
			}
		}
		s.Terms = append(s.Terms, t)
	}
	return nil
}

// dsIndex is ds's position in s.Data (its [[data]] table), 0 if absent.
func dsIndex(s *Study, ds *Dataset) int {
	for i, x := range s.Data {
		if x == ds {
			return i
		}
	}
	return 0
}

// interleave builds a K×len(names) row-major matrix from the dataset's
// columns prefix+name (NaN where the file has no such column).
func interleave(ds *Dataset, names []string, prefix string) ([]float64, error) {
	m := len(names)
	out := make([]float64, ds.K*m)
	for j, n := range names {
		col, err := ds.column(prefix + n)
		if err != nil {
			return nil, err
		}
		for r, v := range col {
			out[r*m+j] = v
		}
	}
	return out, nil
}

// sigmaFor builds a term's K×m σ: the dataset's sigma_<output> columns where
// present, else the study's value (one number for all outputs, or a table
// by output name). Every observed value needs a σ unless the likelihood
// declares it does not use one (abi.CapSigmaFree).
func sigmaFor(d *tomlx.Decoded, key string, raw any, t *Term, needed bool) ([]float64, error) {
	ds, outs := t.Data, t.Outputs
	m := len(outs)
	byOut := make([]float64, m)
	for j := range byOut {
		byOut[j] = math.NaN()
	}
	switch v := raw.(type) {
	case nil:
	case int64, float64:
		x := toFloat(v)
		for j := range byOut {
			byOut[j] = x
		}
	case map[string]any:
		names := make([]string, 0, len(v))
		for k := range v {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			j := indexOf(outs, k)
			if j < 0 {
				return nil, d.Errorf(key, "sigma for %q, which this term does not see (its outputs on dataset %q: %s)", k, ds.Name, strings.Join(outs, ", "))
			}
			x := toFloat(v[k])
			if math.IsNaN(x) {
				return nil, d.Errorf(key, "sigma.%s must be a number", k)
			}
			byOut[j] = x
		}
	default:
		return nil, d.Errorf(key, "sigma must be a number or a table { output = number }")
	}
	for j, x := range byOut {
		if !math.IsNaN(x) && !(x > 0 && !math.IsInf(x, 0)) {
			return nil, d.Errorf(key, "sigma for %q must be a positive number, got %g", outs[j], x)
		}
	}
	sig, err := interleave(ds, outs, "sigma_")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", keyAt(d, key), err)
	}
	for i := range sig {
		if math.IsNaN(sig[i]) {
			sig[i] = byOut[i%m]
		}
		if needed && math.IsNaN(sig[i]) && !math.IsNaN(t.Obs[i]) {
			return nil, d.Errorf(key, "no σ for output %q of dataset %q (row %d): give sigma = { %s = ... } or a sigma_%s column",
				outs[i%m], ds.Name, i/m+1, outs[i%m], outs[i%m])
		}
	}
	return sig, nil
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	}
	return math.NaN()
}

// StopGrace is how long a stopped run waits for work it cannot keep
// going: a built-in model's evaluation (host/target), a method plugin's
// ask or tell. Past it the work is abandoned or interrupted, so that
// Ctrl-C or SIGTERM ends a run within a second in every phase.
const StopGrace = 500 * time.Millisecond

// afterGrace is a context cancelled, with ctx's cause, d after ctx is.
func afterGrace(ctx context.Context, d time.Duration) context.Context {
	out, cancel := context.WithCancelCause(context.Background())
	context.AfterFunc(ctx, func() { time.AfterFunc(d, func() { cancel(context.Cause(ctx)) }) })
	return out
}

// loadMethod loads the method: a plugin is compiled under ictx (the
// interrupt) but created under ctx, so that it outlives an interrupt.
func (s *Study) loadMethod(ctx, ictx context.Context, f *File, d *tomlx.Decoded, o Options) error {
	r, err := parseRef(d, "method", f.Method)
	if err != nil {
		return err
	}
	if r.plugin != "" {
		p, err := s.plugin(ictx, d, r, abi.KindMethod, o)
		if err != nil {
			return err
		}
		vals, err := settingValuesOf(d, r, p.Spec, s.ModelInfo.Spec)
		if err != nil {
			return err
		}
		if s.Method, err = p.Method(ctx, vals); err != nil {
			return pluginSettingErr(d, "method", p.Spec, err)
		}
		s.certifyLater(d, r, p, vals, func(c *wasm.CertifyOptions) {
			// The method is certified on the study's parameters (its d
			// and bounds, in the method's coordinates).
			c.Params = s.XParams
			// A propagation method sees the study's outputs and rows.
			for _, o := range s.ModelInfo.Spec.Outputs {
				c.OutputNames = append(c.OutputNames, o.Name)
			}
			for _, ds := range s.Data {
				c.OutputRows += ds.K
			}
		})
		s.closers = append(s.closers, s.Method.(io.Closer))
		s.MethodInfo = Component{Ref: s.resolvePath(r.plugin), Name: p.Manifest.Name, Spec: p.Spec}
		s.methodKey = func(err error) error { return settingErr(d, "method", p.Spec, err) }
		if ic, ok := s.Method.(interface{ InterruptCalls(context.Context) }); ok {
			// An ask or tell still running StopGrace after the stop is
			// interrupted: the stop must not wait for a method call.
			ic.InterruptCalls(afterGrace(ictx, StopGrace))
		}
		if ls, ok := s.Method.(interface {
			LimitAfterStop(context.Context, time.Duration)
		}); ok {
			// Its samples, report and state, read after a stop, get
			// StopGrace each: the stop must not wait for them either.
			ls.LimitAfterStop(ictx, StopGrace)
		}
		return nil
	}
	e, ok := builtin.Methods[r.use]
	if !ok {
		return d.Errorf("method.use", "no built-in method %q (built-ins: %s)", r.use, strings.Join(builtin.Names(builtin.Methods), ", "))
	}
	vals, err := settingValuesOf(d, r, e.Spec, s.ModelInfo.Spec)
	if err != nil {
		return err
	}
	if s.Method, err = e.New(vals); err != nil {
		return settingErr(d, "method", e.Spec, err)
	}
	s.MethodInfo = Component{Ref: "builtin:" + r.use, Name: r.use, Spec: e.Spec}
	s.methodKey = func(err error) error { return settingErr(d, "method", e.Spec, err) }
	return nil
}

// LocateMethodError prefixes a method's refusal of its problem (Init) with
// the study file, line and key of the setting it names (audit 21: "condition
// 2, but the study has 2 condition rows" named no file or key); the error
// stays err for errors.Is and As.
func (s *Study) LocateMethodError(err error) error {
	if s.methodKey == nil || err == nil {
		return err
	}
	return s.methodKey(err)
}

// cutBy says, for free parameter j, when the model's bounds cut its
// prior's support (so that the interval a message quotes is not the
// prior's own).
func (s *Study) cutBy(j int) string {
	lo, hi := s.Priors[j].Support()
	if p := s.Free[j]; p.Lower > lo || p.Upper < hi {
		return " (the prior " + s.Priors[j].String() + " cut to the model's bounds)"
	}
	return ""
}

// PriorBox is abi.Problem.PriorBox: per free parameter, in the method's
// coordinates, the interval of the prior cut to the bounds that leaves
// abi.PriorBoxTail of its mass outside (the quantiles PriorBoxTail/2 and
// 1 − PriorBoxTail/2); a uniform prior's, or a transformed parameter's,
// is its bounds.
func (s *Study) PriorBox() [][2]float64 {
	transformed := make([]bool, len(s.Free))
	for _, tr := range s.Transforms {
		for _, j := range tr.Idx {
			transformed[j] = true
		}
	}
	box := make([][2]float64, len(s.XParams))
	for j, p := range s.XParams {
		box[j] = [2]float64{p.Lower, p.Upper}
		if _, uniform := s.Priors[j].(prior.Uniform); uniform || transformed[j] {
			continue
		}
		if q, _, err := prior.Truncate(s.Priors[j], p.Lower, p.Upper); err == nil {
			lo, hi := q(abi.PriorBoxTail/2), q(1-abi.PriorBoxTail/2)
			if lo < hi && !math.IsNaN(lo) && !math.IsNaN(hi) {
				box[j] = [2]float64{math.Max(lo, p.Lower), math.Min(hi, p.Upper)}
			}
		}
	}
	return box
}

// usePrevious records that the study used the previous stage's value v
// of parameter name.
func (s *Study) usePrevious(name string, v float64) {
	if s.PreviousUsed == nil {
		s.PreviousUsed = map[string]float64{}
	}
	s.PreviousUsed[name] = v
}

// loadStarts reads init = "starts.csv": a column per free parameter (no
// other columns), one row per starting point, each inside the prior's
// support, so that several methods can start from the same points (the
// Diff-MSM comparison starts M1–M5 from shared initial guesses).
func (s *Study) loadStarts(f *File, d *tomlx.Decoded, o Options) error {
	if f.Init == "" && o.Previous != nil && (s.MethodInfo.Spec.NeedsPriorDraws() || o.PreviousGuessed) {
		// TMCMC or a propagation: its draws are the prior's, whatever the
		// previous stage ended with (which may lie outside this prior).
		return nil
	}
	if f.Init == "" && o.Previous != nil {
		// A later stage starts where the previous one ended; a parameter
		// the previous stage did not have starts at its default.
		row := make([]float64, len(s.Free))
		for j, p := range s.Free {
			v, ok := o.Previous[p.Name]
			if ok {
				s.usePrevious(p.Name, v)
			} else {
				v = s.Base[s.FreeIdx[j]]
				s.PreviousMissing = append(s.PreviousMissing, p.Name)
			}
			if !(v >= p.Lower && v <= p.Upper) || math.IsInf(s.Priors[j].LogPdf(v), -1) {
				return d.Errorf("prior."+p.Name, "the previous stage ended with %s = %g, outside this stage's prior support [%g, %g]%s", p.Name, v, p.Lower, p.Upper, s.cutBy(j))
			}
			row[j] = v
		}
		s.Starts = append(s.Starts, row)
		return nil
	}
	if f.Init == "" {
		return nil
	}
	t, err := dataset.ReadMax(s.resolvePath(f.Init), s.dataLeft)
	if err != nil {
		return fmt.Errorf("%s: %w", keyAt(d, "init"), s.dataErr(err))
	}
	s.InitFile, s.InitSHA256 = f.Init, t.SHA256
	if err := s.charge(d, "init", 2*t.Bytes(), "the initial points"); err != nil {
		return err
	}
	names := make([]string, len(s.Free))
	for i, p := range s.Free {
		names[i] = p.Name
	}
	for _, c := range t.Columns {
		if indexOf(names, c) < 0 {
			return t.Errorf(-1, c, "not a free parameter of the study (free: %s)", strings.Join(names, ", "))
		}
	}
	flat, err := t.Matrix(names)
	if err != nil {
		return fmt.Errorf("%s: every free parameter needs a column: %w", keyAt(d, "init"), err)
	}
	n := len(names)
	for r := range t.Rows {
		row := flat[r*n : (r+1)*n]
		for j, v := range row {
			if p := s.Free[j]; !(v >= p.Lower && v <= p.Upper) || math.IsInf(s.Priors[j].LogPdf(v), -1) {
				return t.Errorf(r, p.Name, "start %g is outside the prior's support [%g, %g]%s", v, p.Lower, p.Upper, s.cutBy(j))
			}
		}
		s.Starts = append(s.Starts, append([]float64(nil), row...))
	}
	return nil
}
