package run

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/manifest"
	"github.com/kinfer/kinfer/host/safefile"
	"github.com/kinfer/kinfer/host/study"
	"github.com/kinfer/kinfer/host/target"
)

// CheckpointFile is the name of the checkpoint in a run's output directory.
const CheckpointFile = "checkpoint.json"

// stateFilePrefix names the file holding the method's saved state:
// checkpoint.<first 16 hex digits of its sha256>.state. A state that did
// not change since the previous checkpoint is not written again.
const stateFilePrefix = "checkpoint."

// checkpoint is everything a run needs to continue exactly where it was:
// the host's prior stream, the tallies, the best point so far, the name of
// the file with the method's own state and, for a streaming method, how
// many samples of the journal belong to it. It is small: samples live in
// the journal, appended as they come, and the method's state in its own
// file, written only when it changed. checkpoint.json is renamed into place
// last, so it never refers to files that are not complete. It is written
// after a batch (at most every Options.CheckpointEvery) and when a run stops
// early, and removed with the other two when the run completes.
type checkpoint struct {
	Kinfer      string        `json:"kinfer"`
	StudyFile   string        `json:"study_file"`    // absolute path
	StudyHash   string        `json:"inputs_sha256"` // of the study, its data and plugins
	Seed        uint64        `json:"seed"`
	Batches     int           `json:"batches"`
	WallSeconds float64       `json:"wall_seconds"`
	PriorRNG    []byte        `json:"prior_rng"`
	StartsUsed  int           `json:"starts_used"` // initial points handed out
	Counts      target.Counts `json:"counts"`
	Best        *abi.Result   `json:"best,omitempty"`
	// MethodState is the file (in the same directory) with the method's
	// state, MethodSHA256 its digest.
	MethodState  string `json:"method_state_file"`
	MethodSHA256 string `json:"method_state_sha256"`
	// JournalSamples is the number of journal records this checkpoint
	// includes (streaming methods; −1: the method does not stream).
	JournalSamples int `json:"journal_samples"`
}

// studyHash digests everything that defines the target: the study file,
// its data, its initial points and its plugins' manifests and modules (by
// role and content, so that moving the files does not change it). A resume
// refuses a checkpoint whose digest differs, so a run never mixes two
// targets.
func studyHash(ins []Input) string {
	h := sha256.New()
	for _, in := range ins {
		fmt.Fprintf(h, "%s\x00%s\x00", in.Role, in.SHA256)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Input is one file a run's results depend on.
type Input struct {
	Role   string `json:"role"` // study, data NAME, init, ROLE manifest, ROLE module
	Path   string `json:"path"` // absolute
	SHA256 string `json:"sha256"`
}

// Inputs lists, with their digests, the files s's results depend on: the
// study file, its data files, its initial points (init = ...) and each
// plugin's manifest and module.
func Inputs(s *study.Study) ([]Input, error) {
	var ins []Input
	// The digest of the bytes the study loaded when it has one (a file
	// replaced while the run loaded it was recorded with the other's
	// digest, audit 17), else of the file now.
	add := func(role, path, loaded string) error {
		abs, err := filepath.Abs(path)
		if err != nil {
			return err
		}
		sum := loaded
		if sum == "" {
			if sum, err = FileSHA256(abs); err != nil {
				return err
			}
		}
		ins = append(ins, Input{Role: role, Path: abs, SHA256: sum})
		return nil
	}
	if err := add("study", s.Path, s.SHA256); err != nil {
		return nil, err
	}
	for _, d := range s.Data {
		if s.NoData {
			break // the [conditions] rows are in the study file
		}
		if err := add("data "+d.Name, d.File, d.SHA256); err != nil {
			return nil, err
		}
	}
	if f, _, err := study.Decode(s.Path); err == nil && f.Init != "" {
		p := f.Init
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.Dir, p)
		}
		if err := add("init", p, s.InitSHA256); err != nil {
			return nil, err
		}
	}
	type comp struct {
		role string
		c    study.Component
	}
	comps := []comp{{"model", s.ModelInfo}}
	for _, t := range s.Terms {
		comps = append(comps, comp{"likelihood " + t.Name, t.Component})
	}
	comps = append(comps, comp{"method", s.MethodInfo})
	for _, c := range comps {
		if strings.HasPrefix(c.c.Ref, "builtin:") {
			continue
		}
		if f, ok := strings.CutPrefix(c.c.Ref, study.SurrogatePrefix); ok {
			if err := add(c.role+" file", f, ""); err != nil {
				return nil, err
			}
			continue
		}
		m, err := manifest.Load(c.c.Ref)
		if err != nil {
			return nil, err
		}
		if err := add(c.role+" manifest", c.c.Ref, ""); err != nil {
			return nil, err
		}
		if err := add(c.role+" module", m.WasmPath(), ""); err != nil {
			return nil, err
		}
	}
	return ins, nil
}

// FileSHA256 is the hex sha256 of the file at path, a regular file of at
// most MaxInputBytes (a path recorded in a run directory may name a named
// pipe or /dev/zero: hashing either would never end).
func FileSHA256(path string) (string, error) {
	f, err := safefile.Open(path, MaxInputBytes)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, safefile.Limit(f, path, MaxInputBytes)); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// saveMethodState writes the method's state into its content-named file
// unless that file is already there, and returns the file's name and the
// state's digest.
func saveMethodState(dir string, st []byte) (name, sum string, err error) {
	h := sha256.Sum256(st)
	sum = hex.EncodeToString(h[:])
	name = stateFilePrefix + sum[:16] + ".state"
	p := filepath.Join(dir, name)
	if old, err := safefile.ReadFile(p, int64(len(st))); err == nil && len(old) == len(st) && sha256.Sum256(old) == h {
		return name, sum, nil
	}
	return name, sum, writeFileAtomic(p, st)
}

// writeCheckpoint renames the new checkpoint.json into place (the commit
// point) and then removes method state files it no longer refers to.
func writeCheckpoint(dir string, c *checkpoint) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, CheckpointFile), b); err != nil {
		return err
	}
	removeStateFiles(dir, c.MethodState)
	return nil
}

// removeStateFiles removes the method state files of dir except keep.
func removeStateFiles(dir, keep string) {
	old, _ := filepath.Glob(filepath.Join(dir, stateFilePrefix+"*.state"))
	for _, p := range old {
		if filepath.Base(p) != keep {
			os.Remove(p)
		}
	}
}

// removeCheckpoint removes the checkpoint, the method state and the
// journal.
func removeCheckpoint(dir string) {
	os.Remove(filepath.Join(dir, CheckpointFile))
	removeStateFiles(dir, "")
	os.Remove(filepath.Join(dir, JournalFile))
}

// ErrOtherInputs: a checkpoint written for other inputs (the study, its
// data or plugins changed since), which no resume can continue.
var ErrOtherInputs = errors.New("restore them to resume, or run the study again into another -o")

// readCheckpoint reads dir's checkpoint and the method state it refers to,
// and checks that both belong to this study and seed.
func readCheckpoint(dir string, s *study.Study, hash string, budget int64) (*checkpoint, []byte, error) {
	p := filepath.Join(dir, CheckpointFile)
	var c checkpoint
	if err := ReadRecord(p, MaxCheckpointBytes, &c); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("--resume: no %s in %s (a run that completed removes it)", CheckpointFile, dir)
		}
		return nil, nil, err
	}
	if c.StudyHash != hash {
		return nil, nil, fmt.Errorf("--resume: %s was written for other inputs: the study file %s, its data files or its plugins changed since: %w", p, s.Path, ErrOtherInputs)
	}
	if c.Seed != s.Seed {
		return nil, nil, fmt.Errorf("--resume: %s was written with seed %d, this run has seed %d", p, c.Seed, s.Seed)
	}
	if err := checkCounts(&c); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", p, err)
	}
	if c.StartsUsed > len(s.Starts) {
		return nil, nil, fmt.Errorf("%s: starts_used is %d, the study has %d initial points", p, c.StartsUsed, len(s.Starts))
	}
	if c.Best != nil && len(c.Best.Theta) != len(s.XParams) {
		return nil, nil, fmt.Errorf("%s: the best point has %d values, the study %d parameters", p, len(c.Best.Theta), len(s.XParams))
	}
	if c.MethodState == "" || filepath.Base(c.MethodState) != c.MethodState || !strings.HasPrefix(c.MethodState, stateFilePrefix) {
		return nil, nil, fmt.Errorf("%s: bad method state file %q (want %s…, in the same directory)", p, c.MethodState, stateFilePrefix)
	}
	sp, err := safefile.Inside(dir, c.MethodState)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: method state file: %w", p, err)
	}
	st, err := safefile.ReadFile(sp, StateLimit(budget))
	if err != nil {
		var tl *safefile.TooLarge
		if errors.As(err, &tl) {
			return nil, nil, fmt.Errorf("checkpoint: method state: %w (a quarter of the memory budget of %s; a larger --memory-budget reads more)%w", err, FormatBytes(budget), errOverBudget)
		}
		return nil, nil, fmt.Errorf("checkpoint: method state: %w", err)
	}
	if h := sha256.Sum256(st); hex.EncodeToString(h[:]) != c.MethodSHA256 {
		return nil, nil, fmt.Errorf("checkpoint: method state %s does not match its sha256 in %s", c.MethodState, p)
	}
	return &c, st, nil
}
