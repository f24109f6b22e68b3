package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kinfer/kinfer/builtin/models/surrogate"
	"github.com/kinfer/kinfer/builtin/surrogate/kriging"
	"github.com/kinfer/kinfer/builtin/surrogate/nn"
	"github.com/kinfer/kinfer/host/designrun"
	"github.com/kinfer/kinfer/host/run"
	"github.com/kinfer/kinfer/host/safefile"
	"github.com/kinfer/kinfer/host/train"
)

// cmdTrain fits a neural-network surrogate (or with --kind kriging one
// Kriging predictor per output) to a design run (host/train) and writes it
// with its provenance and validation report.
func cmdTrain(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	def := nn.DefaultConfig()
	out := fs.String("o", "", "the surrogate `FILE` to write (required; the report goes to FILE without .json + .report.json)")
	val := fs.String("validation", "", "a second design run `DIR` of the same study for validation (the paper: 2 000 samples); default: hold out --holdout of the points")
	holdout := fs.Float64("holdout", 0.1, "share of the design points held out for validation when --validation is not given")
	points := fs.Int("points", 0, "train on the design points with index below N only (0: all)")
	hidden := fs.String("hidden", joinInts(def.Hidden), "hidden layer widths, comma-separated (default: Bartsoen et al. 2023's)")
	members := fs.Int("members", def.Members, "networks in the ensemble")
	member := fs.Int("member", 0, "train only network `K` (1 … --members) of the ensemble, from the same random stream as a full training; join the members' files with kinfer combine")
	epochs := fs.Int("epochs", def.Epochs, "maximum epochs per network")
	batch := fs.Int("batch", def.BatchSize, "mini-batch size")
	lr := fs.Float64("lr", def.LearningRate, "Adam's initial learning rate")
	minLR := fs.Float64("min-lr", def.MinLearningRate, "training stops when the plateau decay would take the rate below this")
	patience := fs.Int("patience", def.Patience, "epochs without a fall of the training loss before the rate is multiplied by --decay")
	decay := fs.Float64("decay", def.DecayFactor, "learning-rate factor on a plateau")
	plateau := fs.Float64("plateau-delta", def.PlateauMinDelta, "a plateau: the training loss has not fallen below best·(1 − this) for --patience epochs")
	limit := fs.Duration("time-limit", 0, "stop every network after the first epoch that ends past this wall `DURATION` from the start (0: none); the report's epochs per member reproduce the result with --epochs")
	progress := fs.Bool("progress", false, "print every member's training loss and learning rate after every epoch")
	l2 := fs.Float64("l2", def.L2, "L2 factor on the kernels")
	dropout := fs.Float64("dropout", def.Dropout, "dropout probability of the hidden layers during training")
	delta := fs.Float64("huber-delta", def.HuberDelta, "δ of the Huber loss (Eq. 6) on normalised outputs")
	budgetFlag := fs.String("memory-budget", "", "memory the training may take: the design runs' samples (about 2.5 bytes per byte of design.csv) and, for nn, the network (about 72 bytes per parameter), e.g. 8GiB (default: half the physical memory, at most 16 GiB)")
	weights := fs.String("weights", def.Weights, "nn: precision the trained weight matrices are kept in: float32 (rounded once after the last epoch; predictions then read half the bytes with the bits of the float64 forward pass) or float64")
	seed := fs.Uint64("seed", 1, "seed of the initial weights, shuffles, dropout and the holdout")
	kind := fs.String("kind", "nn", "surrogate `KIND`: nn (a neural-network ensemble) or kriging (one DACE Kriging predictor per output, θ by maximum likelihood; the network flags do not apply)")
	order := fs.Int("regression", 0, "kriging: regression polynomial order 0 (constant), 1 (linear) or 2 (quadratic)")
	corr := fs.String("corr", "gaussian", "kriging: correlation gaussian, exponential, matern32 or matern52")
	nugget := fs.Float64("nugget", 0, "kriging: nugget λ relative to the process variance (0: interpolate, with DACE's (10+n)·ε only)")
	estNugget := fs.Bool("estimate-nugget", false, "kriging: estimate the nugget by maximum likelihood in [1e-10, 0.1] (noisy outputs)")
	pos, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageError{fmt.Errorf("want a design run DIR (or several of the same model: a design and its refinements)")}
	}
	if *out == "" {
		return usageError{fmt.Errorf("-o FILE is required")}
	}
	if *points < 0 {
		return usageError{fmt.Errorf("--points %d: want 0 (all) or a positive number of points", *points)}
	}
	if err := writable(*out); err != nil {
		return err
	}
	if err := notOverInputs(*out, append(slices.Clone(pos), *val), nil); err != nil {
		return err
	}
	cfg := def
	if cfg.Hidden, err = parseInts(*hidden); err != nil {
		return usageError{fmt.Errorf("--hidden: %v", err)}
	}
	cfg.Members, cfg.Epochs, cfg.BatchSize, cfg.LearningRate, cfg.MinLearningRate = *members, *epochs, *batch, *lr, *minLR
	cfg.Patience, cfg.DecayFactor, cfg.L2, cfg.Dropout, cfg.HuberDelta, cfg.Seed = *patience, *decay, *l2, *dropout, *delta, *seed
	cfg.PlateauMinDelta, cfg.Member, cfg.Weights = *plateau, *member, *weights
	// Refused before the designs are read or the plan printed (audit 21:
	// "training 0 networks", then the refusal).
	if *kind == "nn" {
		if err := cfg.Validate(); err != nil {
			return flagNames(err) // every field Validate names is a flag's
		}
	}
	if *limit < 0 {
		return usageError{fmt.Errorf("--time-limit %v: want 0 (none) or a positive duration", *limit)}
	}
	if *limit > 0 {
		cfg.Deadline = time.Now().Add(*limit)
	}
	if *progress {
		var mu sync.Mutex
		t0 := time.Now()
		cfg.Progress = func(member, epoch int, loss, rate float64) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(stdout, "member %d epoch %d loss %.6g rate %.3g (%.0f s)\n", member+1, epoch, loss, rate, time.Since(t0).Seconds())
		}
	}
	if err := designsFit(append(slices.Clone(pos), *val), *budgetFlag); err != nil {
		return err
	}
	ds, left, err := readDesignsLeft(pos, *budgetFlag)
	if err != nil {
		return err
	}
	o := train.Options{Config: cfg, Holdout: *holdout, Points: *points}
	if *val != "" {
		// Within the same budget as the training designs (review 23).
		if left <= 0 {
			return fmt.Errorf("%s: %w: the training design runs took the half of the memory budget that designs may hold, leaving none for it (--memory-budget)", *val, train.ErrDesignOverBudget)
		}
		if o.Validation, err = train.ReadDesignWithin(*val, left); err != nil {
			return err
		}
	}
	switch *kind {
	case "nn":
	case "kriging":
		c, err := kriging.ParseCorrelation(*corr)
		if err != nil {
			return usageError{fmt.Errorf("--corr: %v", err)}
		}
		if *order < 0 || *order > 2 {
			return usageError{fmt.Errorf("--regression %d: want 0, 1 or 2", *order)}
		}
		if !(*nugget >= 0) || math.IsInf(*nugget, 0) {
			return usageError{fmt.Errorf("--nugget %v: want a finite λ ≥ 0", *nugget)}
		}
		if *nugget > 0 && *estNugget {
			return usageError{fmt.Errorf("--nugget and --estimate-nugget exclude each other: give λ, or let it be estimated")}
		}
		o.Kriging = kriging.Options{Order: *order, Correlation: c, Nugget: *nugget, EstimateNugget: *estNugget}
		fmt.Fprintf(stdout, "fitting %d Kriging predictors (regression order %d, %v correlation) on %s (%d samples of %d inputs)\n",
			ds.Data.Out, *order, c, ds.Dir, ds.Data.N, ds.Data.In)
		ms, prov, rep, err := train.TrainKriging(ds, o)
		if err != nil {
			return err
		}
		rep.Command = "kinfer train " + strings.Join(args, " ")
		if err := train.WriteKriging(*out, ms, prov, rep); err != nil {
			return err
		}
		fmt.Fprint(stdout, rep.Table())
		fmt.Fprintf(stdout, "written: %s (sha256 %s), %s\n", *out, rep.SHA256, train.ReportPath(*out))
		return nil
	default:
		return usageError{fmt.Errorf("--kind %q: want nn or kriging", *kind)}
	}
	if err := trainFits(cfg, ds.Data.In, ds.Data.Out, *budgetFlag); err != nil {
		return err
	}
	what := fmt.Sprintf("%d networks", cfg.Members)
	if cfg.Member > 0 {
		what = fmt.Sprintf("network %d of %d", cfg.Member, cfg.Members)
	}
	fmt.Fprintf(stdout, "training %s %v on %s (%d samples of %d inputs → %d outputs)\n",
		what, cfg.Hidden, ds.Dir, ds.Data.N, ds.Data.In, ds.Data.Out)
	e, prov, rep, err := train.Train(ds, o)
	if err != nil {
		return flagNames(err)
	}
	rep.Command = "kinfer train " + strings.Join(args, " ")
	if err := train.Write(*out, e, prov, rep); err != nil {
		return err
	}
	fmt.Fprint(stdout, rep.Table())
	fmt.Fprintf(stdout, "written: %s (sha256 %s), %s\n", *out, rep.SHA256, train.ReportPath(*out))
	return nil
}

// cmdCombine joins the member files of one ensemble trained with
// kinfer train --member K into the file one training would have written.
func cmdCombine(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("combine", flag.ContinueOnError)
	out := fs.String("o", "", "the ensemble `FILE` to write (required; the report goes to FILE without .json + .report.json)")
	val := fs.String("validation", "", "the validation design run `DIR` the members were validated on (required)")
	budgetFlag := fs.String("memory-budget", "", "memory the validation design's samples may take when read (half of it), e.g. 8GiB (default: half the physical memory, at most 16 GiB)")
	pos, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageError{fmt.Errorf("want the member files (kinfer train --member K -o FILE)")}
	}
	if *out == "" {
		return usageError{fmt.Errorf("-o FILE is required")}
	}
	if *val == "" {
		return usageError{fmt.Errorf("--validation DIR is required")}
	}
	if err := writable(*out); err != nil {
		return err
	}
	members := slices.Clone(pos)
	for _, m := range pos {
		members = append(members, train.ReportPath(m))
	}
	if err := notOverInputs(*out, []string{*val}, members); err != nil {
		return err
	}
	budget, err := trainBudget(*budgetFlag)
	if err != nil {
		return err
	}
	v, err := train.ReadDesignWithin(*val, budget/2)
	if err != nil {
		return err
	}
	e, prov, rep, err := train.Combine(pos, v)
	if err != nil {
		return err
	}
	rep.Command = "kinfer combine " + strings.Join(args, " ")
	if err := train.Write(*out, e, prov, rep); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d networks, weights %.4g\n", len(e.Nets), e.Weights)
	fmt.Fprint(stdout, rep.Table())
	fmt.Fprintf(stdout, "written: %s (sha256 %s), %s\n", *out, rep.SHA256, train.ReportPath(*out))
	return nil
}

// cmdScore measures a surrogate file on design runs it was not trained
// on (train.Score): the validation report's errors, on held-out data.
func cmdScore(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("score", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the scores as one JSON object (file, kind, designs, samples, outside_training_box, outputs) instead of the table")
	budgetFlag := fs.String("memory-budget", "", "memory the design runs' samples may take when read (half of it), e.g. 8GiB (default: half the physical memory, at most 16 GiB)")
	pos, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return usageError{fmt.Errorf("want a surrogate file and at least one design run DIR (kinfer design)")}
	}
	b, err := safefile.ReadFile(pos[0], surrogate.MaxFileBytes)
	if err != nil {
		return err
	}
	sf, err := surrogate.ReadFile(b)
	if err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	// Scored as the model a study would load (its box and its split of
	// inputs into parameters and conditions), or not at all (audit 15: a
	// file with an inverted box, which inspect and every study refuse,
	// was scored).
	if _, err := sf.Spec(); err != nil {
		return fmt.Errorf("%s: not usable as a model: %w", pos[0], err)
	}
	// Before the designs are parsed: a design the surrogate was trained
	// on, known by its digest, and designs too large for the memory
	// budget (audit 10: 1.5 GB parsed, then refused by the digest).
	for _, dir := range pos[1:] {
		if err := train.TrainedOnFile(sf.Provenance, dir); err != nil {
			return err
		}
	}
	if err := designsFit(pos[1:], *budgetFlag); err != nil {
		return err
	}
	ds, err := readDesigns(pos[1:], *budgetFlag)
	if err != nil {
		return err
	}
	outs, err := train.Score(sf, ds)
	if err != nil {
		return err
	}
	out := train.OutsideBox(sf, ds)
	if *asJSON {
		b, err := json.MarshalIndent(train.ScoreReport{File: pos[0], Kind: sf.KindName(), Designs: pos[1:], Samples: ds.Data.N, Outside: out, Outputs: outs}, "", "  ")
		if err != nil {
			return err
		}
		_, err = stdout.Write(append(b, '\n'))
		return err
	}
	fmt.Fprintf(stdout, "%s (%s) on %s: %d samples, %d outside the training box\n", pos[0], sf.Kind(), strings.Join(pos[1:], " + "), ds.Data.N, out.Samples)
	fmt.Fprint(stdout, train.OutputTable(outs))
	fmt.Fprint(stdout, out.Text(ds.Data.N))
	return nil
}

// readDesigns reads design runs and merges them into one (train.Merge),
// their samples within half the memory budget (--memory-budget, flag "":
// the default), counted as read: csv_bytes of design.json, which
// designsFit checks first, is the record's word, not the file's.
func readDesigns(dirs []string, flag string) (*train.Design, error) {
	ds, _, err := readDesignsLeft(dirs, flag)
	return ds, err
}

// readDesignsLeft is readDesigns, with what remains of the half budget
// for another design (the validation one).
func readDesignsLeft(dirs []string, flag string) (*train.Design, int64, error) {
	budget, err := trainBudget(flag)
	if err != nil {
		return nil, 0, err
	}
	left := budget / 2
	var parts []*train.Design
	for _, dir := range dirs {
		if left <= 0 {
			// Said so, not "more than the 1 B this design may hold"
			// (review 25).
			return nil, 0, fmt.Errorf("%s: %w: the design runs before it took the half of the memory budget of %s that designs may hold (--memory-budget)", dir, train.ErrDesignOverBudget, run.FormatBytes(budget))
		}
		d, err := train.ReadDesignWithin(dir, left)
		if err != nil {
			return nil, 0, err
		}
		left -= 2 * int64(d.Data.N) * int64(d.Data.In+d.Data.Out+1) * 8
		parts = append(parts, d)
	}
	ds, err := train.Merge(parts...)
	return ds, left, err
}

// notOverInputs refuses an -o whose surrogate file or report would replace
// one of the command's inputs (a design run's design.csv or design.json, a
// member file), by path or as the same file.
func notOverInputs(out string, designs []string, files []string) error {
	var ins []run.Input
	for _, d := range designs {
		if d != "" {
			files = append(files, filepath.Join(d, "design.csv"), filepath.Join(d, "design.json"))
			// And the inputs the design recorded (its study, data and
			// plugins: audit 10, -o force_length.csv replaced the
			// measured data); a design.json that does not read is
			// reported by the training itself.
			if rec, err := designrun.ReadRecord(filepath.Join(d, "design.json")); err == nil {
				for _, in := range rec.Provenance.Inputs {
					files = append(files, in.Path)
				}
			}
		}
	}
	for _, f := range files {
		ins = append(ins, run.Input{Path: f})
	}
	for _, target := range []string{out, train.ReportPath(out)} {
		if in, ok := run.Clobbers(target, ins); ok {
			return fmt.Errorf("-o %s would write over %s, an input of this command: give another file", out, in.Path)
		}
	}
	return nil
}

// writable checks, before a training that may take hours, that -o FILE
// can be written: its folder exists, FILE is not a folder, and neither FILE
// nor its report is anything but a regular file.
func writable(path string) error {
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("-o %s: the folder %s does not exist", path, dir)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("-o %s is a folder; give the surrogate FILE to write", path)
	}
	// Neither the file nor its report may be a device, a named pipe or a
	// symbolic link: the write would replace it (checked again when
	// written).
	for _, p := range []string{path, train.ReportPath(path)} {
		if err := safefile.CheckTarget(p); err != nil {
			return fmt.Errorf("-o %s: %w", path, err)
		}
	}
	return nil
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// inspectSurrogate prints a surrogate file's model spec and provenance
// (kinfer inspect SURROGATE.json).
func inspectSurrogate(w io.Writer, path string) error {
	b, err := safefile.ReadFile(path, surrogate.MaxFileBytes)
	if err != nil {
		return err
	}
	sf, err := surrogate.ReadFile(b)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	prov := sf.Provenance
	fmt.Fprintf(w, "file:         %s\n", path)
	if e := sf.Ensemble; e != nil {
		fmt.Fprintf(w, "kind:         neural-network ensemble, %d networks, %d → %d\n", len(e.Nets), e.In(), e.Out())
		if e.Float32Exact() {
			fmt.Fprintln(w, "weights:      float32 values (predicted from float32 panels with the float64 network's bits)")
		} else {
			fmt.Fprintln(w, "weights:      float64 (weights = \"float32\" in a study rounds them)")
		}
		for k, n := range e.Nets {
			fmt.Fprintf(w, "  network %d:  sizes %v, weight %.4g\n", k+1, n.Sizes, e.Weights[k])
		}
	} else {
		ms := sf.Kriging
		fmt.Fprintf(w, "kind:         Kriging, %d predictors on %d sites, %d → %d\n", len(ms), ms[0].Sites(), ms[0].Dim(), len(ms))
		for k, m := range ms {
			fmt.Fprintf(w, "  output %d:   regression order %d, %v, θ %.4g, nugget %.3g\n", k+1, m.Order(), m.Correlation(), m.Theta(), m.Nugget())
		}
	}
	short := prov // the names, units and box are printed with the spec below
	short.InputNames, short.OutputNames, short.InputUnits, short.OutputUnits, short.ParamLower, short.ParamUpper = nil, nil, nil, nil, nil, nil
	pj, _ := json.MarshalIndent(short, "  ", "  ")
	fmt.Fprintf(w, "provenance:\n  %s\n", pj)
	spec, err := sf.Spec()
	if err != nil {
		return fmt.Errorf("%s: not usable as a model: %w", path, err)
	}
	fmt.Fprintln(w, "as a model (use = \"surrogate\"):")
	printSpec(w, spec)
	return nil
}

// nnFlags maps the network configuration's field names, as nn's errors
// give them, to the flags a user typed.
var nnFlags = strings.NewReplacer("nn: HuberDelta", "--huber-delta", "nn: LearningRate", "--lr", "nn: BatchSize", "--batch",
	"nn: L2", "--l2", "nn: Dropout", "--dropout", "nn: Epochs", "--epochs", "nn: Members", "--members", "nn: Member", "--member",
	"Members =", "--members =", "nn: PlateauMinDelta", "--plateau-delta", "nn: DecayFactor", "--decay",
	"nn: MinLearningRate", "--min-lr", "nn: Patience", "--patience", "nn: Weights", "--weights")

// flagNames rewrites a configuration error of nn in the flags' names (a
// usage error); any other error passes unchanged.
func flagNames(err error) error {
	msg := err.Error()
	if out := nnFlags.Replace(msg); out != msg {
		return usageError{errors.New(out)}
	}
	return err
}

// bytesPerParam is what training and writing a network take per weight
// or bias: the weights, their gradient, Adam's two moments and the best
// epoch's copy (8 bytes each), and the file's base64 and its JSON buffer
// (11 each); 2.3 GB were measured for 32.5 M parameters.
const bytesPerParam = 72

// designBytesFactor is the memory a design's samples take while they are
// read, normalised and trained on, per byte of design.csv: a 906 MB
// design.csv peaked at 2.2 GB (audit 10, with a network of 50
// parameters).
const designBytesFactor = 2.5

// designsFit refuses design runs (the training ones and the validation
// one; "" is none) whose design.csv files would need more memory than the
// budget once read (designBytesFactor), before reading them: a budget of
// 256 MiB was passed 8.6 times by the data alone (audit 10). A design.json
// that does not read is left to the reading, which names it.
func designsFit(dirs []string, flag string) error {
	budget, err := trainBudget(flag)
	if err != nil {
		return err
	}
	var total int64
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if rec, err := designrun.ReadRecord(filepath.Join(d, "design.json")); err == nil && rec.CSVBytes > 0 {
			total += rec.CSVBytes
		}
	}
	if need := int64(designBytesFactor * float64(total)); need > budget {
		return fmt.Errorf("the design runs' design.csv files (%s) need about %s of memory to train on (%.1f bytes per byte of CSV), more than the memory budget of %s (--memory-budget)",
			run.FormatBytes(total), run.FormatBytes(need), designBytesFactor, run.FormatBytes(budget))
	}
	return nil
}

// trainBudget is --memory-budget, or the default budget.
func trainBudget(flag string) (int64, error) {
	if flag == "" {
		return run.DefaultMemoryBudget(), nil
	}
	b, err := run.ParseBytes(flag)
	if err != nil {
		return 0, usageError{fmt.Errorf("--memory-budget: %w", err)}
	}
	return b, nil
}

// trainFits refuses a network whose parameters (all members) would need
// more memory than the budget (flag, default run.DefaultMemoryBudget),
// before training, instead of exhausting memory when the file is written
// (audit 5: a 5700×5700 network, inside the parameter bound, died with
// "fatal error: out of memory" under a 4 GiB limit).
func trainFits(cfg nn.Config, in, out int, flag string) error {
	budget, err := trainBudget(flag)
	if err != nil {
		return err
	}
	per := nn.ParamsOf(append(append([]int{in}, cfg.Hidden...), out))
	members := int64(cfg.Members)
	if cfg.Member > 0 {
		members = 1
	}
	if per*int64(cfg.Members) > nn.MaxParams {
		return nil // refused by the ensemble's own bound, with its message
	}
	if need := per * members * bytesPerParam; need > budget {
		return fmt.Errorf("--hidden %s and --members %d: %d parameters need about %s to train and write (%d bytes each), more than the memory budget of %s (--memory-budget; default half the physical memory, lowered to the process's limits)",
			joinInts(cfg.Hidden), cfg.Members, per*members, run.FormatBytes(need), bytesPerParam, run.FormatBytes(budget))
	}
	return nil
}
