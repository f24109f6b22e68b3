package kriging

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/kinfer/kinfer/builtin/surrogate/internal/floatcode"
	"github.com/kinfer/kinfer/builtin/surrogate/internal/savefile"
	"github.com/kinfer/kinfer/internal/strictjson"
	"io"
	"math"
	"os"

	"github.com/kinfer/kinfer/builtin/surrogate/nn"
)

// The file format of fitted Kriging predictors (one per output, on shared
// sites). A file stores what Fit needs to rebuild each predictor without a
// likelihood search: the training sites and responses in original units
// (little-endian float64 in base64, exact), the regression order, the
// correlation family, θ and the nugget λ. Read refits at exactly that θ
// and λ (Options.FixTheta): the normalisation, R, its Cholesky factor, the
// QR factor of C⁻¹F, β, γ and σ² are recomputed by the same code from the
// same bits, so a loaded predictor predicts bit for bit as the one that
// was written (on the same machine and gonum build; elsewhere up to the
// rounding of the BLAS kernels). The file also records β and σ²: Read
// refuses a file whose data do not reproduce them (relative 1e-8), which
// catches edited or corrupted data. Loading costs one O(n³) factorisation
// per output.
const (
	Format        = "kinfer-kriging"
	FormatVersion = 1
	// MaxFileBytes bounds what Read reads.
	MaxFileBytes = 1 << 30
	// MaxSites, MaxDim and MaxOutputs bound the counts in a file, and
	// MaxCells the sum over outputs of n² (the correlation matrices and
	// their factors Read allocates: ≈ 3·8·MaxCells bytes, 400 MB, and a
	// refit of ≈ n³/3 operations per output: seconds). 2²⁷ cells let a
	// 470 KB file of 11 000 sites take 2 minutes and 1 GB to load; the
	// largest Kriging surrogates here (Lin et al.'s 908 sites × 18
	// outputs, 14.8 M cells) fit in 2²⁴.
	MaxSites   = 4096
	MaxDim     = 1000
	MaxOutputs = 1000
	MaxCells   = 1 << 24
)

// maxFileBytes is MaxFileBytes, lowered by a test.
var maxFileBytes int64 = MaxFileBytes

// Provenance is the surrogate file provenance shared with the network
// ensembles (builtin/surrogate/nn), so that both kinds become the same
// study model (builtin/models/surrogate).
type Provenance = nn.Provenance

type fileOutput struct {
	Order       int       `json:"regression_order"`
	Correlation string    `json:"correlation"`
	Theta       nn.Floats `json:"theta"`
	Nugget      float64   `json:"nugget"`
	Y           string    `json:"y"`
	Beta        nn.Floats `json:"beta"`
	Sigma2      float64   `json:"sigma2"`
	Objective   float64   `json:"objective"`
}

type fileSet struct {
	Format        string       `json:"format"`
	FormatVersion int          `json:"format_version"`
	Provenance    Provenance   `json:"provenance"`
	Sites         int          `json:"sites"`
	Dim           int          `json:"dim"`
	X             string       `json:"x"`
	Outputs       []fileOutput `json:"outputs" maxlen:"1000"` // MaxOutputs
}

// Write encodes predictors fitted on the same sites (one per output) with
// their provenance as one JSON document.
func Write(w io.Writer, models []*Model, prov Provenance) error {
	if len(models) == 0 {
		return errors.New("kriging: no model to write")
	}
	m0 := models[0]
	f := fileSet{Format: Format, FormatVersion: FormatVersion, Provenance: prov, Sites: m0.n, Dim: m0.d, X: floatcode.Encode(m0.xRaw)}
	for k, m := range models {
		if m.n != m0.n || m.d != m0.d || !sameBits(m.xRaw, m0.xRaw) {
			return fmt.Errorf("kriging: model %d was fitted on other sites than model 1", k+1)
		}
		f.Outputs = append(f.Outputs, fileOutput{Order: m.order, Correlation: m.corr.String(), Theta: m.st.theta,
			Nugget: m.st.nugget, Y: floatcode.Encode(m.yRaw), Beta: m.st.beta, Sigma2: m.st.sigma2, Objective: m.st.obj})
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetIndent("", " ")
	if err := enc.Encode(&f); err != nil {
		return err
	}
	return bw.Flush()
}

// Save writes the predictors to path (see Write), whole or not at all
// (a temporary file renamed onto path).
func Save(path string, models []*Model, prov Provenance) error {
	if err := savefile.Save(path, func(w io.Writer) error { return Write(w, models, prov) }); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// Read decodes predictors written by Write from r (see Decode); at most
// MaxFileBytes are read.
func Read(r io.Reader) ([]*Model, Provenance, error) {
	b, err := strictjson.ReadAll(r, maxFileBytes)
	if err != nil {
		return nil, Provenance{}, fmt.Errorf("kriging: %v", err)
	}
	return Decode(b)
}

// Decode decodes predictors written by Write and refits each at its stored
// θ and λ. The input is untrusted: it is at most MaxFileBytes, unknown
// keys and over-long lists are refused before anything is decoded
// (strictjson), and the site, coordinate and output counts are checked
// against MaxSites, MaxDim, MaxOutputs and MaxCells before any array is
// decoded or matrix allocated.
func Decode(b []byte) ([]*Model, Provenance, error) {
	if int64(len(b)) > maxFileBytes {
		return nil, Provenance{}, fmt.Errorf("kriging: file larger than %d bytes", maxFileBytes)
	}
	var f fileSet
	if err := strictjson.Unmarshal(b, &f); err != nil {
		return nil, Provenance{}, fmt.Errorf("kriging: %v", err)
	}
	p := f.Provenance
	if err := p.Check(); err != nil {
		return nil, p, fmt.Errorf("kriging: %w", err)
	}
	if f.Format != Format {
		return nil, p, fmt.Errorf("kriging: format %q, want %q", f.Format, Format)
	}
	if f.FormatVersion != FormatVersion {
		return nil, p, fmt.Errorf("kriging: format version %d, this kinfer reads %d", f.FormatVersion, FormatVersion)
	}
	n, d := f.Sites, f.Dim
	if n < 2 || n > MaxSites {
		return nil, p, fmt.Errorf("kriging: %d sites, must be in [2, %d] (kinfer before 2026-11-27 allowed 20 000): retrain on fewer sites, kinfer train --kind kriging --points N", n, MaxSites)
	}
	if d < 1 || d > MaxDim {
		return nil, p, fmt.Errorf("kriging: %d coordinates, must be in [1, %d]", d, MaxDim)
	}
	if len(f.Outputs) < 1 || len(f.Outputs) > MaxOutputs {
		return nil, p, fmt.Errorf("kriging: %d outputs, must be in [1, %d]", len(f.Outputs), MaxOutputs)
	}
	if int64(n)*int64(n)*int64(len(f.Outputs)) > MaxCells {
		return nil, p, fmt.Errorf("kriging: %d outputs on %d sites exceed %d correlation-matrix entries (n² summed over the outputs; kinfer before 2026-11-27 allowed 2²⁷): retrain on fewer sites, kinfer train --kind kriging --points N", len(f.Outputs), n, MaxCells)
	}
	xs, err := floatcode.Decode(f.X, n*d, "kriging: sites")
	if err != nil {
		return nil, p, err
	}
	x := make([][]float64, n)
	for i := range x {
		x[i] = xs[i*d : (i+1)*d : (i+1)*d]
	}
	var out []*Model
	for k, fo := range f.Outputs {
		what := fmt.Sprintf("output %d", k+1)
		c, err := ParseCorrelation(fo.Correlation)
		if err != nil {
			return nil, p, fmt.Errorf("%s: %w", what, err)
		}
		if fo.Order < 0 || fo.Order > 2 {
			return nil, p, fmt.Errorf("kriging: %s: regression order %d, want 0, 1 or 2", what, fo.Order)
		}
		if len(fo.Theta) != d {
			return nil, p, fmt.Errorf("kriging: %s: %d θ values for %d coordinates", what, len(fo.Theta), d)
		}
		if !(fo.Nugget > 0) || fo.Nugget > 1e6 {
			return nil, p, fmt.Errorf("kriging: %s: nugget %g, want in (0, 1e6]", what, fo.Nugget)
		}
		if len(fo.Beta) != nBasis(fo.Order, d) {
			return nil, p, fmt.Errorf("kriging: %s: %d β values, regression order %d in %d-D has %d", what, len(fo.Beta), fo.Order, d, nBasis(fo.Order, d))
		}
		y, err := floatcode.Decode(fo.Y, n, "kriging: "+what+" responses")
		if err != nil {
			return nil, p, err
		}
		m, err := Fit(x, y, Options{Order: fo.Order, Correlation: c, FixTheta: true, Theta0: fo.Theta, Nugget: fo.Nugget})
		if err != nil {
			return nil, p, fmt.Errorf("%s: %w", what, err)
		}
		if m.st.nugget != fo.Nugget {
			return nil, p, fmt.Errorf("kriging: %s: nugget %g is below the regularisation (10 + n)·ε = %g", what, fo.Nugget, m.st.nugget)
		}
		if !close8(m.st.sigma2, fo.Sigma2) {
			return nil, p, fmt.Errorf("kriging: %s: the data and θ give σ² = %g, the file records %g (edited or corrupted file)", what, m.st.sigma2, fo.Sigma2)
		}
		for a := range fo.Beta {
			if !close8(m.st.beta[a], fo.Beta[a]) {
				return nil, p, fmt.Errorf("kriging: %s: the data and θ give β[%d] = %g, the file records %g (edited or corrupted file)", what, a, m.st.beta[a], fo.Beta[a])
			}
		}
		out = append(out, m)
	}
	return out, p, nil
}

// close8 is |a − b| ≤ 1e-8·max(1, |a|, |b|).
func close8(a, b float64) bool {
	return math.Abs(a-b) <= 1e-8*max(1, math.Abs(a), math.Abs(b))
}

// Load reads a file written by Save (see Read); errors name the file.
func Load(path string) ([]*Model, Provenance, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, Provenance{}, err
	}
	defer fh.Close()
	ms, p, err := Read(fh)
	if err != nil {
		return nil, p, fmt.Errorf("%s: %w", path, err)
	}
	return ms, p, nil
}

// Order is the regression order, Correlation the correlation family.
func (m *Model) Order() int               { return m.order }
func (m *Model) Correlation() Correlation { return m.corr }

// Sites is the number of training sites n.
func (m *Model) Sites() int { return m.n }
