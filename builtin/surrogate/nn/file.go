package nn

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/kinfer/kinfer/builtin/surrogate/internal/floatcode"
	"github.com/kinfer/kinfer/builtin/surrogate/internal/savefile"
	"github.com/kinfer/kinfer/internal/guesttext"
	"github.com/kinfer/kinfer/internal/strictjson"
)

// Format names the file format; FormatVersion is bumped on incompatible
// changes.
const (
	Format        = "kinfer-nn-ensemble"
	FormatVersion = 1
	// MaxFileBytes bounds what Read and Load read: MaxParams values in
	// base64 are 341 MiB. (The paper's ensemble of six is ≈ 8.2 M
	// parameters, ≈ 88 MB.) Decoding holds the file and its values, about
	// 1.75× its size at most.
	MaxFileBytes = 384 << 20
	// maxFloats bounds a Floats list (widths are at most MaxWidth).
	maxFloats = 1 << 20
)

// maxFileBytes is MaxFileBytes, lowered by a test.
var maxFileBytes int64 = MaxFileBytes

// Provenance pins what a trained surrogate came from. The package cannot
// know the kinfer version or the model: the caller fills them.
type Provenance struct {
	KinferVersion      string   `json:"kinfer_version"`
	TrainingDataSHA256 string   `json:"training_data_sha256"`
	ValidationSHA256   string   `json:"validation_data_sha256,omitempty"`
	Seed               uint64   `json:"seed"`
	Model              string   `json:"model,omitempty"`
	ModelVersion       string   `json:"model_version,omitempty"`
	ModelSHA256        string   `json:"model_sha256,omitempty"`
	TrainingSamples    int      `json:"training_samples,omitempty"`
	InputNames         []string `json:"input_names,omitempty"`
	OutputNames        []string `json:"output_names,omitempty"`
	// For a surrogate of a kinfer model (builtin/models/surrogate): the
	// last Conditions inputs are the model's conditions, the others its
	// parameters; the units of inputs and outputs; the box of the
	// parameters the design covered (ParamLower/ParamUpper, one per
	// parameter input); the design (kind, n, seed, space) and the sha256
	// of its record.
	Conditions   int      `json:"conditions,omitempty"`
	InputUnits   []string `json:"input_units,omitempty"`
	OutputUnits  []string `json:"output_units,omitempty"`
	ParamLower   Floats   `json:"param_lower,omitempty"`
	ParamUpper   Floats   `json:"param_upper,omitempty"`
	Design       string   `json:"design,omitempty"`
	DesignSHA256 string   `json:"design_record_sha256,omitempty"`
}

// Check refuses provenance text with control characters (a received file
// is untrusted: its model name and version reach the terminal in
// messages, and an escape sequence would drive it; audit 4).
func (p *Provenance) Check() error {
	for _, f := range []struct{ key, v string }{{"kinfer_version", p.KinferVersion}, {"model", p.Model}, {"model_version", p.ModelVersion},
		{"design", p.Design}, {"training_data_sha256", p.TrainingDataSHA256}, {"validation_data_sha256", p.ValidationSHA256},
		{"model_sha256", p.ModelSHA256}, {"design_record_sha256", p.DesignSHA256}} {
		if !guesttext.Clean(f.v) {
			return fmt.Errorf("provenance %s \"%s\" has a control character or invalid UTF-8", f.key, guesttext.Escape(f.v))
		}
	}
	for _, l := range [][]string{p.InputUnits, p.OutputUnits} {
		for _, v := range l {
			if !guesttext.Clean(v) {
				return fmt.Errorf("provenance unit \"%s\" has a control character or invalid UTF-8", guesttext.Escape(v))
			}
		}
	}
	return nil
}

// Floats is a list of numbers in a surrogate file. JSON's null, which
// encoding/json would read as 0 inside a []float64, is refused: a file is
// input, and a silent 0 in a bound, a normalisation or a weight would give
// wrong results rather than an error.
type Floats []float64

// UnmarshalJSON reads a JSON array of numbers, refusing null elements and
// lists of more than 2^20 values. It parses the text itself: decoding
// into []*float64 to see the nulls cost ≈ 24 bytes per value.
func (f *Floats) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		*f = nil
		return nil
	}
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return fmt.Errorf("want a list of numbers, not %.20s", b)
	}
	out, err := parseFloats(b, maxFloats)
	if err != nil {
		return err
	}
	*f = out
	return nil
}

// LossHistory is a member's training loss per epoch in a file: at most
// MaxLossValues values (Write keeps every k-th of a longer history, with
// TrainInfo.LossEvery = k). 64 histories of 2^20 values each ("0,"),
// within every list's bound, decoded to 512 MiB from a 128 MiB file and
// passed the load's memory plan 4 times (audit 15).
type LossHistory []float64

// MaxLossValues bounds a LossHistory.
const MaxLossValues = 1 << 16

// UnmarshalJSON reads the history as Floats does, within MaxLossValues.
func (l *LossHistory) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		*l = nil
		return nil
	}
	out, err := parseFloats(b, MaxLossValues)
	if err != nil {
		return fmt.Errorf("a member's training loss history (training[].Loss): %w", err)
	}
	*l = out
	return nil
}

// parseFloats parses a JSON list of numbers of at most max values,
// refusing null elements; one pass, no slice of tokens.
func parseFloats(b []byte, max int) ([]float64, error) {
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return nil, fmt.Errorf("want a list of numbers, not %.20s", b)
	}
	inner := bytes.TrimSpace(b[1 : len(b)-1])
	out := make([]float64, 0)
	if len(inner) > 0 {
		n := bytes.Count(inner, []byte{','}) + 1
		if n > max {
			return nil, fmt.Errorf("a list of %d values, at most %d", n, max)
		}
		out = make([]float64, 0, n)
		for i := 0; len(inner) > 0 || i < n; i++ {
			tok, rest, _ := bytes.Cut(inner, []byte{','})
			inner = rest
			tok = bytes.TrimSpace(tok)
			if string(tok) == "null" {
				return nil, fmt.Errorf("value %d of a list is null, not a number", i+1)
			}
			v, err := strconv.ParseFloat(string(tok), 64)
			if err != nil || !isJSONNumber(tok) {
				return nil, fmt.Errorf("value %d of a list is %.20s, not a finite number", i+1, tok)
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// isJSONNumber says whether tok starts as a JSON number does (the
// document is valid JSON, so a token that does is one): not a string, a
// list or a literal that strconv would take, such as "Inf".
func isJSONNumber(tok []byte) bool {
	return len(tok) > 0 && (tok[0] == '-' || (tok[0] >= '0' && tok[0] <= '9'))
}

type fileNet struct {
	Sizes []int  `json:"sizes" maxlen:"66"` // MaxLayers + 2
	XMean Floats `json:"x_mean"`
	XSD   Floats `json:"x_sd"`
	YMean Floats `json:"y_mean"`
	YSD   Floats `json:"y_sd"`
	// W and B: per layer, the little-endian IEEE-754 float64 values in
	// base64 (exact and ≈ 3× smaller than decimal text).
	W []floatcode.B64 `json:"w" maxlen:"65"`
	B []floatcode.B64 `json:"b" maxlen:"65"`
}

type fileEnsemble struct {
	Format        string      `json:"format"`
	FormatVersion int         `json:"format_version"`
	Activation    string      `json:"activation"`
	Provenance    Provenance  `json:"provenance"`
	Config        *Config     `json:"config,omitempty"`
	InputLo       Floats      `json:"input_lo,omitempty"`
	InputHi       Floats      `json:"input_hi,omitempty"`
	Weights       Floats      `json:"weights"`
	Nets          []fileNet   `json:"networks" maxlen:"64"` // MaxMembers
	Info          []TrainInfo `json:"training,omitempty" maxlen:"64"`
}

// Write encodes the ensemble with its provenance as one JSON document.
func (e *Ensemble) Write(w io.Writer, prov Provenance) error {
	if err := e.check(); err != nil {
		return err
	}
	f := fileEnsemble{Format: Format, FormatVersion: FormatVersion, Activation: "softplus",
		Provenance: prov, Config: e.Config, InputLo: e.InputLo, InputHi: e.InputHi, Weights: e.Weights, Info: thinLoss(e.Info)}
	for _, n := range e.Nets {
		fn := fileNet{Sizes: n.Sizes, XMean: n.XMean, XSD: n.XSD, YMean: n.YMean, YSD: n.YSD}
		for l := range n.W {
			fn.W = append(fn.W, n.W[l])
			fn.B = append(fn.B, n.B[l])
		}
		f.Nets = append(f.Nets, fn)
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetIndent("", " ")
	if err := enc.Encode(&f); err != nil {
		return err
	}
	return bw.Flush()
}

// thinLoss returns info with every loss history longer than MaxLossValues
// thinned to every k-th epoch (LossEvery = k; the last epoch's loss kept
// last), so that the file reads back.
func thinLoss(info []TrainInfo) []TrainInfo {
	out := make([]TrainInfo, len(info))
	for i, t := range info {
		if n := len(t.Loss); n > MaxLossValues {
			k := (n + MaxLossValues - 2) / (MaxLossValues - 1)
			var l LossHistory
			for e := k - 1; e < n; e += k {
				l = append(l, t.Loss[e])
			}
			if (n-1)%k != k-1 {
				l = append(l, t.Loss[n-1])
			}
			t.Loss, t.LossEvery = l, k
		}
		out[i] = t
	}
	return out
}

// Save writes the ensemble to path (see Write), through a temporary file
// in the same folder renamed onto path: a failed write leaves no partial
// file, and an existing file at path stays whole until the new one is.
func (e *Ensemble) Save(path string, prov Provenance) error {
	if err := savefile.Save(path, func(w io.Writer) error { return e.Write(w, prov) }); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Read decodes an ensemble written by Write from r (see Decode); at most
// MaxFileBytes are read.
func Read(r io.Reader) (*Ensemble, Provenance, error) {
	b, err := strictjson.ReadAll(r, maxFileBytes)
	if err != nil {
		return nil, Provenance{}, fmt.Errorf("nn: %v", err)
	}
	return Decode(b)
}

// Decode decodes an ensemble written by Write. The input is untrusted: it
// is at most MaxFileBytes; unknown keys and lists longer than their bound
// are refused before anything is decoded (strictjson), the weights decode
// straight from the text, and layer counts, widths, parameter totals and
// the number of members are checked against MaxLayers, MaxWidth,
// MaxParams and MaxMembers.
func Decode(b []byte) (*Ensemble, Provenance, error) {
	if int64(len(b)) > maxFileBytes {
		return nil, Provenance{}, fmt.Errorf("nn: file larger than %d bytes", maxFileBytes)
	}
	var f fileEnsemble
	if err := strictjson.Unmarshal(b, &f); err != nil {
		if f.Format == "" {
			var head struct {
				Format string `json:"format"`
			}
			_ = json.Unmarshal(b, &head)
			f.Format = head.Format
		}
		if f.Format != "" && f.Format != Format {
			// Another kind of file (a Kriging surrogate, a report), named
			// by its format field rather than by its first unknown field.
			return nil, Provenance{}, fmt.Errorf("nn: format %q, want %q (a network ensemble written by kinfer train)", f.Format, Format)
		}
		return nil, Provenance{}, fmt.Errorf("nn: %v", err)
	}
	if f.Format != Format {
		return nil, f.Provenance, fmt.Errorf("nn: format %q, want %q", f.Format, Format)
	}
	if f.FormatVersion != FormatVersion {
		return nil, f.Provenance, fmt.Errorf("nn: format version %d, this kinfer reads %d", f.FormatVersion, FormatVersion)
	}
	if f.Activation != "softplus" {
		return nil, f.Provenance, fmt.Errorf("nn: activation %q, only softplus is supported", f.Activation)
	}
	if len(f.Nets) < 1 || len(f.Nets) > MaxMembers {
		return nil, f.Provenance, fmt.Errorf("nn: %d networks, must be in [1, %d]", len(f.Nets), MaxMembers)
	}
	total := 0
	for k, fn := range f.Nets {
		if err := checkSizes(fn.Sizes); err != nil {
			return nil, f.Provenance, fmt.Errorf("network %d: %w", k+1, err)
		}
		for l := 1; l < len(fn.Sizes); l++ {
			total += fn.Sizes[l-1]*fn.Sizes[l] + fn.Sizes[l]
		}
		if total > MaxParams {
			return nil, f.Provenance, fmt.Errorf("nn: ensemble has more than %d parameters", MaxParams)
		}
	}
	e := &Ensemble{Weights: f.Weights, Info: f.Info, Config: f.Config, InputLo: f.InputLo, InputHi: f.InputHi}
	for k, fn := range f.Nets {
		L := len(fn.Sizes) - 1
		if len(fn.W) != L || len(fn.B) != L {
			return nil, f.Provenance, fmt.Errorf("nn: network %d has %d weight and %d bias layers for %d layers", k+1, len(fn.W), len(fn.B), L)
		}
		n := &Net{Sizes: fn.Sizes, XMean: fn.XMean, XSD: fn.XSD, YMean: fn.YMean, YSD: fn.YSD, W: make([][]float64, L), B: make([][]float64, L)}
		for l := 0; l < L; l++ {
			var err error
			n.W[l], n.B[l] = fn.W[l], fn.B[l]
			if err = floatcode.Check(n.W[l], fn.Sizes[l]*fn.Sizes[l+1], fmt.Sprintf("nn: network %d layer %d weights", k+1, l+1)); err != nil {
				return nil, f.Provenance, err
			}
			if err = floatcode.Check(n.B[l], fn.Sizes[l+1], fmt.Sprintf("nn: network %d layer %d biases", k+1, l+1)); err != nil {
				return nil, f.Provenance, err
			}
		}
		e.Nets = append(e.Nets, n)
	}
	if err := e.check(); err != nil {
		return nil, f.Provenance, err
	}
	s := 0.0
	for _, w := range e.Weights {
		s += w
	}
	if math.Abs(s-1) > 1e-9 {
		return nil, f.Provenance, fmt.Errorf("nn: ensemble weights sum to %v, want 1", s)
	}
	if (e.InputLo != nil && len(e.InputLo) != e.In()) || (e.InputHi != nil && len(e.InputHi) != e.In()) {
		return nil, f.Provenance, errors.New("nn: training box has the wrong dimension")
	}
	if (e.InputLo == nil) != (e.InputHi == nil) {
		return nil, f.Provenance, errors.New("nn: training box has input_lo or input_hi only")
	}
	for j := range e.InputLo {
		if !(e.InputLo[j] <= e.InputHi[j]) {
			return nil, f.Provenance, fmt.Errorf("nn: training box of input %d is [%g, %g], want lo ≤ hi", j+1, e.InputLo[j], e.InputHi[j])
		}
	}
	if err := f.Provenance.Check(); err != nil {
		return nil, f.Provenance, fmt.Errorf("nn: %w", err)
	}
	return e, f.Provenance, nil
}

// Load reads an ensemble file (see Read); errors name the file.
func Load(path string) (*Ensemble, Provenance, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, Provenance{}, err
	}
	defer fh.Close()
	e, p, err := Read(fh)
	if err != nil {
		return nil, p, fmt.Errorf("%s: %w", path, err)
	}
	return e, p, nil
}

// SHA256File returns the hex sha256 of a file, for Provenance.
func SHA256File(path string) (string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.Copy(h, fh); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
