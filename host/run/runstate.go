package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kinfer/kinfer/host/study"
)

// StateFile is the name of the run's state record in its output directory.
const StateFile = "run.json"

// Run states recorded in StateFile.
const (
	StateRunning  = "running"  // written at the start; still there after a kill
	StateStopped  = "stopped"  // ended early with partial results; error says why
	StateComplete = "complete" // the method finished
)

// RunState is run.json: what a run is doing or how it ended, so that
// `kinfer run --resume` can say what happened to a run that left no
// checkpoint (docs/OUTPUTS.md).
type RunState struct {
	State     string `json:"state"`
	PID       int    `json:"pid"`
	StudyFile string `json:"study_file"`
	Seed      uint64 `json:"seed"`
	Method    string `json:"method"`
	// CanCheckpoint: the method can save its state (abi.Checkpointer).
	CanCheckpoint bool   `json:"method_can_checkpoint"`
	Started       string `json:"started"`
	Updated       string `json:"updated"`
	Resumes       int    `json:"resumes,omitempty"`
	// NoReport: the run was started with --no-report, which its resumes
	// keep.
	NoReport bool   `json:"no_report,omitempty"`
	Error    string `json:"error,omitempty"`
}

func writeRunState(dir string, st *RunState) error {
	st.Updated = time.Now().UTC().Format(time.RFC3339)
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, StateFile), append(b, '\n'))
}

// ReadRunState reads dir's run.json (nil, nil when there is none).
func ReadRunState(dir string) (*RunState, error) {
	var st RunState
	if err := ReadRecord(filepath.Join(dir, StateFile), MaxRunStateBytes, &st); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	return &st, nil
}

// ResumeInfo reads the study file and seed recorded in dir's checkpoint, so
// that `kinfer run --resume DIR` needs nothing else. Without a checkpoint
// it says, from run.json, what happened to the run. The caller should hold
// dir's lock, so that a run found "running" is known to have been killed.
func ResumeInfo(dir string) (studyFile string, seed uint64, err error) {
	var c checkpoint
	err = ReadRecord(filepath.Join(dir, CheckpointFile), MaxCheckpointBytes, &c)
	if err == nil {
		if c.StudyFile == "" {
			return "", 0, fmt.Errorf("%s: no study_file", filepath.Join(dir, CheckpointFile))
		}
		return c.StudyFile, c.Seed, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", 0, err
	}
	st, err := ReadRunState(dir)
	if err != nil {
		return "", 0, err
	}
	if st == nil {
		if isStagesDir(dir) {
			return "", 0, fmt.Errorf("--resume: %s; a multi-stage study resumes by running it again with the same -o", NotARun(dir))
		}
		return "", 0, fmt.Errorf("--resume: %s holds no kinfer run (no %s, no %s)", dir, StateFile, CheckpointFile)
	}
	again := fmt.Sprintf("run it again: kinfer run %s -o %s", st.StudyFile, dir)
	if strings.Contains(st.Error, ErrAllFailed.Error()) {
		// Running it again would fail the same way (audit 4).
		return "", 0, fmt.Errorf("--resume: the run in %s ended because every evaluation failed (%s): fix the model, its settings or the prior, then run the study again", dir, st.Error)
	}
	how := "was stopped"
	// One line: an error of several (the stop, then a failed save)
	// was split inside the parentheses (audit 15).
	stErr := strings.ReplaceAll(strings.TrimSpace(st.Error), "\n", "; ")
	switch st.State {
	case StateComplete:
		return "", 0, fmt.Errorf("--resume: the run in %s completed (%s); there is nothing to resume", dir, st.Updated)
	case StateRunning:
		how = fmt.Sprintf("was killed while running (pid %d, last recorded %s)", st.PID, st.Updated)
	default:
		if stErr != "" {
			how = fmt.Sprintf("was stopped (%s)", stErr)
		}
	}
	if st.Method == "" {
		return "", 0, fmt.Errorf("--resume: the run in %s %s before its study was loaded; %s", dir, how, again)
	}
	if !st.CanCheckpoint {
		return "", 0, fmt.Errorf("--resume: the run in %s %s and its method %s cannot checkpoint; %s", dir, how, st.Method, again)
	}
	if strings.Contains(stErr, "save state: ") {
		// The method could not save its state: no checkpoint was written.
		return "", 0, fmt.Errorf("--resume: the run in %s %s, and no checkpoint was written since its method could not save its state; %s", dir, how, again)
	}
	return "", 0, fmt.Errorf("--resume: the run in %s %s before its first checkpoint; %s", dir, how, again)
}

// AnalysisFile is the name of `kinfer analyze`'s output in a run's
// directory; a new or resumed run removes it, as it no longer describes
// the samples.
const AnalysisFile = "analysis.json"

// StagesFile is the record of a multi-stage run in its output directory,
// which holds one run directory per stage.
const StagesFile = "stages.json"

// isStagesDir reports whether dir is a multi-stage study's folder: it has
// a stages.json (once complete) or a stage's folder with stage_start.json.
func isStagesDir(dir string) bool {
	if _, err := os.Lstat(filepath.Join(dir, StagesFile)); err == nil {
		return true
	}
	m, _ := filepath.Glob(filepath.Join(dir, "stage[0-9]*", "stage_start.json"))
	return len(m) > 0
}

// NotARun is the hint for a directory that holds no run where one was
// expected: a multi-stage study's folder names its stages' folders.
func NotARun(dir string) string {
	if isStagesDir(dir) {
		stages, _ := filepath.Glob(filepath.Join(dir, "stage[0-9]*"))
		eg := ""
		if len(stages) > 0 {
			eg = ", e.g. " + stages[len(stages)-1]
		}
		return fmt.Sprintf("%s is a multi-stage study's folder: give one stage's folder%s", dir, eg)
	}
	// A run that has not written its results: killed, stopped before
	// them, or still running. Say so, and how to go on.
	if st, err := ReadRunState(dir); err == nil && st != nil && st.State != StateComplete {
		next := fmt.Sprintf("run it again: kinfer run %s -o %s", st.StudyFile, dir)
		if _, err := os.Stat(filepath.Join(dir, CheckpointFile)); err == nil {
			next = "resume it: kinfer run --resume " + dir
		}
		how := fmt.Sprintf("was stopped (%s)", st.Updated)
		if st.Error != "" {
			how = fmt.Sprintf("was stopped (%s, %s)", st.Updated, st.Error)
		}
		if st.State == StateRunning {
			how = fmt.Sprintf("has not finished (run.json: running, pid %d, last recorded %s): if it was killed", st.PID, st.Updated)
		}
		return fmt.Sprintf("the run in %s %s, %s", dir, how, next)
	}
	return fmt.Sprintf("is %s a run's output directory?", dir)
}

// ReportFile is the name of the report kinfer run (unless --no-report)
// and kinfer report write into a run's directory (host/report's
// FileName). A new run removes the previous run's, with its analysis.
const ReportFile = "report.html"

// WriteUnloaded records a run that stopped before its study was loaded (an
// interrupt during plugin compilation): summary.json with "complete":
// false and the cause, and run.json "stopped". The previous run's outputs
// in dir are removed, as they are not this run's. The caller holds dir's
// lock; seed < 0 means the study's.
func WriteUnloaded(dir, studyFile string, seed int64, cause error) error {
	abs, err := filepath.Abs(studyFile)
	if err != nil {
		return err
	}
	sum := &Summary{Kinfer: Version, StudyFile: abs, Complete: false, Error: cause.Error()}
	if f, _, err := study.Decode(studyFile); err == nil {
		sum.Study = f.Name
		sum.Seed = 1
		if f.Seed != nil && *f.Seed >= 0 {
			sum.Seed = uint64(*f.Seed)
		}
	}
	if seed >= 0 {
		sum.Seed = uint64(seed)
	}
	p := BuildInfo()
	p.Seed = sum.Seed
	if h, err := FileSHA256(abs); err == nil {
		p.Inputs = []Input{{Role: "study", Path: abs, SHA256: h}}
	}
	sum.Provenance = &p
	removeCheckpoint(dir)
	for _, name := range []string{"samples.csv", ParquetFile, AnalysisFile, ReportFile} {
		os.Remove(filepath.Join(dir, name))
	}
	if err := writeJSON(filepath.Join(dir, "summary.json"), sum); err != nil {
		return err
	}
	now := time.Now().UTC().Format(time.RFC3339)
	return writeRunState(dir, &RunState{State: StateStopped, PID: os.Getpid(), StudyFile: abs, Seed: sum.Seed,
		Started: now, Error: sum.Error})
}
