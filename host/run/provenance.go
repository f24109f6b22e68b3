package run

import (
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"runtime/debug"

	"github.com/kinfer/kinfer/host/safefile"
	"github.com/kinfer/kinfer/host/study"
	"github.com/kinfer/kinfer/internal/guesttext"
)

// Version is kinfer's version, written into summary.json.
const Version = "0.1.0"

// Provenance is summary.json's record of what made the results: the
// program (kinfer's version and VCS revision, the Go toolchain, wazero,
// the platform) and every input file by sha256. With the seed it is what
// `kinfer run --verify` needs to re-run the study; the number of workers
// does not change results (by design) and is not part of it.
type Provenance struct {
	Kinfer      string `json:"kinfer"`
	VCSRevision string `json:"vcs_revision"` // "unknown" when the binary was built without VCS stamping
	VCSModified string `json:"vcs_modified"` // "true", "false" or "unknown"
	Go          string `json:"go"`
	Wazero      string `json:"wazero"`
	// Platform is GOOS/GOARCH: floating-point results may differ between
	// architectures (fused multiply-add, assembly math routines).
	Platform string  `json:"platform"`
	Seed     uint64  `json:"seed"`
	Inputs   []Input `json:"inputs" maxlen:"65536"` // maxlen: read back by ReadRecord
}

// BuildInfo is the program part of the provenance.
func BuildInfo() Provenance {
	p := Provenance{Kinfer: Version, VCSRevision: "unknown", VCSModified: "unknown", Go: runtime.Version(),
		Wazero: "unknown", Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return p
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			p.VCSRevision = s.Value
		case "vcs.modified":
			p.VCSModified = s.Value
		}
	}
	for _, d := range bi.Deps {
		if d.Path == "github.com/tetratelabs/wazero" {
			p.Wazero = d.Version
			if d.Replace != nil {
				p.Wazero = d.Replace.Path + " " + d.Replace.Version
			}
		}
	}
	return p
}

func provenance(s *study.Study, ins []Input) *Provenance {
	p := BuildInfo()
	p.Seed = s.Seed
	p.Inputs = ins
	return &p
}

// ChangedInputs describes each recorded input whose file is gone, is not a
// regular file, or has other contents now (its sha256 differs from the
// record's), one line per input ("data pull /abs/d.csv (sha256 … then,
// … now)"); nil when every input is as recorded. Commands that reload a
// run's study and data (kinfer run --verify and --resume, analyze,
// report) use it so that a run's results are never compared with other
// inputs than those that made them.
func ChangedInputs(ins []Input) []string {
	var changed []string
	for _, in := range ins {
		h, err := FileSHA256(in.Path)
		switch {
		case err != nil:
			changed = append(changed, guesttext.Escape(fmt.Sprintf("%s %s: %v", in.Role, in.Path, err)))
		case h != in.SHA256:
			changed = append(changed, guesttext.Escape(fmt.Sprintf("%s %s (sha256 %s then, %s now)", in.Role, in.Path, ShortHash(in.SHA256), ShortHash(h))))
		}
	}
	return changed
}

// ShortHash is the first 12 hex digits of a digest, for messages.
func ShortHash(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}

// StudyMismatch says why a summary's study_file is not the study its
// provenance records ("" when it is): a record without provenance cannot
// tie its study file to the run, and one whose provenance names another
// study file describes another run (audit 9: kinfer analyze reloaded any
// study_file a summary.json named and reported its data as the run's).
func StudyMismatch(studyFile string, p *Provenance) string {
	if p == nil {
		return "summary.json has no provenance record, so its study_file cannot be tied to the run"
	}
	for _, in := range p.Inputs {
		if in.Role == "study" {
			if filepath.Clean(in.Path) != filepath.Clean(studyFile) {
				return guesttext.Escape(fmt.Sprintf("summary.json's study_file %s is not the study its provenance records (%s)", studyFile, in.Path))
			}
			return ""
		}
	}
	return "summary.json's provenance records no study file"
}

// CheckSamples refuses a samples.csv that is not as its run wrote it:
// one that does not end with a line break (cut short inside its last row,
// which then reads as a shorter row of other numbers), or whose rows are
// not the number summary.json records (recorded; a negative count is no
// count a run writes, and refused too). A run
// writes the file whole and renames it into place, so either is damage or
// another run's file (audit 9: a partial copy read as 301 of 600 samples,
// the last with a truncated log likelihood).
func CheckSamples(path string, rows, recorded int) error {
	f, err := safefile.Open(path, math.MaxInt64)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if last[0] != '\n' {
			return fmt.Errorf("%s does not end with a line break: it was cut short (a partial copy?), so its last row cannot be trusted; copy the run folder again", path)
		}
	}
	if recorded < 0 {
		return fmt.Errorf("summary.json records %d samples: not a record a run writes (edited?), so %s cannot be checked against it", recorded, path)
	}
	if rows != recorded {
		return fmt.Errorf("%s has %d rows, summary.json records %d: it is not the file the run wrote (a partial copy, or another run's)", path, rows, recorded)
	}
	return nil
}

// UnrecordedInputs describes each of the inputs a study loaded now
// (Inputs) that the run's record does not list with the same path and
// sha256: a study reloaded from a record edited to name another copy of
// it, or with an input's entry removed, resolves files the run never read
// (audit 10: both bypassed ChangedInputs, which checks only the record's
// own entries). nil when every loaded input is recorded.
func UnrecordedInputs(loaded, recorded []Input) []string {
	var out []string
	for _, in := range loaded {
		ok := false
		for _, r := range recorded {
			if filepath.Clean(r.Path) == filepath.Clean(in.Path) && r.SHA256 == in.SHA256 {
				ok = true
				break
			}
		}
		if !ok {
			out = append(out, guesttext.Escape(fmt.Sprintf("%s %s (sha256 %s) is not in the run's record", in.Role, in.Path, ShortHash(in.SHA256))))
		}
	}
	return out
}
