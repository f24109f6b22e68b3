package run

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/kinfer/kinfer/host/study"
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
			changed = append(changed, fmt.Sprintf("%s %s: %v", in.Role, in.Path, err))
		case h != in.SHA256:
			changed = append(changed, fmt.Sprintf("%s %s (sha256 %s then, %s now)", in.Role, in.Path, ShortHash(in.SHA256), ShortHash(h)))
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
