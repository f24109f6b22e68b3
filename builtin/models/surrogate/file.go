package surrogate

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/surrogate/kriging"
	"github.com/kinfer/kinfer/builtin/surrogate/nn"
)

// MaxFileBytes bounds a surrogate file of either kind.
const MaxFileBytes = max(nn.MaxFileBytes, kriging.MaxFileBytes)

// File is a decoded surrogate file: a network ensemble or Kriging
// predictors (exactly one is set) and the provenance.
type File struct {
	Ensemble   *nn.Ensemble
	Kriging    []*kriging.Model
	Provenance nn.Provenance
}

// Format returns the "format" field of a surrogate file: nn.Format or
// kriging.Format (the writers put it first; otherwise the document is
// scanned for it).
func Format(b []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err == nil && t == json.Delim('{') {
		if k, err := dec.Token(); err == nil && k == "format" {
			if v, err := dec.Token(); err == nil {
				if s, ok := v.(string); ok {
					return s, nil
				}
			}
		}
	}
	var f struct {
		Format string `json:"format"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return "", fmt.Errorf("surrogate: %v", err)
	}
	return f.Format, nil
}

// ReadFile decodes a surrogate file of either kind, told apart by its
// format field (nn.Decode and kriging.Decode bound what they decode).
func ReadFile(b []byte) (*File, error) {
	format, err := Format(b)
	if err != nil {
		return nil, err
	}
	f := &File{}
	switch format {
	case nn.Format:
		f.Ensemble, f.Provenance, err = nn.Decode(b)
	case kriging.Format:
		f.Kriging, f.Provenance, err = kriging.Decode(b)
	default:
		return nil, fmt.Errorf("surrogate: format %q, want %q (kinfer train) or %q (kinfer train --kind kriging)", format, nn.Format, kriging.Format)
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// KindName is the surrogate's kind as kinfer train --kind and the
// training report's "kind" name it: "kriging" or "nn".
func (f *File) KindName() string {
	if f.Kriging != nil {
		return "kriging"
	}
	return "nn"
}

// Kind names the surrogate for people: "neural-network ensemble" or
// "Kriging".
func (f *File) Kind() string {
	if f.Kriging != nil {
		return "Kriging"
	}
	return "neural-network ensemble"
}

// Spec is SpecOf or SpecOfKriging.
func (f *File) Spec() (abi.Spec, error) {
	if f.Kriging != nil {
		return SpecOfKriging(f.Kriging, f.Provenance)
	}
	return SpecOf(f.Ensemble, f.Provenance)
}

// New is New or NewKriging.
func (f *File) New(settings []float64) (*Model, error) {
	if f.Kriging != nil {
		return NewKriging(f.Kriging, f.Provenance, settings)
	}
	return New(f.Ensemble, f.Provenance, settings)
}
