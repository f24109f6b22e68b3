package study

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pullMOT is the ligament pull test of study_test.go as an OpenSim .mot,
// with labels that differ from the model's names: the study's columns key
// maps them.
const pullMOT = "pull\nversion=1\nnRows=3\nnColumns=3\ninDegrees=no\nendheader\n" +
	"time\tlen\tforce\n0\t29\t10\n0.1\t30\t50\n0.2\t31\t120\n"

func loadMOT(t *testing.T, text, mot string) (*Study, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pull.mot"), []byte(mot), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "study.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return Load(context.Background(), p, Options{Workers: 1})
}

func TestOpenSimDatasetWithColumns(t *testing.T) {
	text := strings.Replace(base, `file = "d.csv"`, `file = "pull.mot"
columns = { length_mm = "len", force_N = "force" }`, 1)
	s, err := loadMOT(t, text, pullMOT)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Data[0].K != 3 || s.Data[0].X[2] != 31 || s.Terms[0].Obs[1] != 50 {
		t.Fatalf("data %+v term %+v", s.Data[0], s.Terms[0])
	}

	// The file also has a column named as the model's output (another
	// sensor, a previous fit): the mapping chose "force", so that column
	// is not used.
	withOwn := strings.Replace(strings.Replace(pullMOT, "time\tlen\tforce\n", "time\tlen\tforce\tforce_N\n", 1), "nColumns=3", "nColumns=4", 1)
	withOwn = strings.NewReplacer("0\t29\t10\n", "0\t29\t10\t-1\n", "0.1\t30\t50\n", "0.1\t30\t50\t-1\n", "0.2\t31\t120\n", "0.2\t31\t120\t-1\n").Replace(withOwn)
	s2, err := loadMOT(t, text, withOwn)
	if err != nil {
		t.Fatalf("a file with its own force_N column: %v", err)
	}
	if s2.Terms[0].Obs[1] != 50 {
		t.Fatalf("observations %v, want the mapped column force (10, 50, 120)", s2.Terms[0].Obs)
	}
	s2.Close()

	// A label the file lacks: the error names the study key and the file.
	bad := strings.Replace(text, `force_N = "force"`, `force_N = "ground_force_vy"`, 1)
	_, err = loadMOT(t, bad, pullMOT)
	if err == nil || !strings.Contains(err.Error(), "data[0].columns") || !strings.Contains(err.Error(), `pull.mot: no column "ground_force_vy"`) {
		t.Fatalf("missing label: %v", err)
	}
	// One label for two names: refused (the second mapping once vanished,
	// leaving the file's own column of that name in use).
	_, err = loadMOT(t, strings.Replace(text, `force_N = "force"`, `force_N = "len"`, 1), pullMOT)
	if err == nil || !strings.Contains(err.Error(), `column "len" is mapped twice, for force_N and for length_mm`) {
		t.Fatalf("label mapped twice: %v", err)
	}
	// A value of another kind than a table is refused by name (a list was
	// dropped silently by the decoder).
	for _, bad := range []string{`columns = ["len", "force"]`, `columns = "length_mm=len"`, `columns = 5`} {
		_, err = loadMOT(t, strings.Replace(text, `columns = { length_mm = "len", force_N = "force" }`, bad, 1), pullMOT)
		if err == nil || !strings.Contains(err.Error(), `key "data[0].columns": columns maps the model's names to the file's labels`) {
			t.Errorf("%s: %v", bad, err)
		}
	}
	// A name that is not the model's: refused with the model's names.
	_, err = loadMOT(t, strings.Replace(text, `force_N = "force"`, `force = "force"`, 1), pullMOT)
	if err == nil || !strings.Contains(err.Error(), `key "data[0].columns": model "ligament" has no condition or output "force"`) {
		t.Fatalf("unknown name: %v", err)
	}
	// A ragged row: file and line.
	_, err = loadMOT(t, text, strings.Replace(pullMOT, "0.1\t30\t50", "0.1\t30", 1))
	if err == nil || !strings.Contains(err.Error(), "pull.mot:9: ragged row") {
		t.Fatalf("ragged row: %v", err)
	}
	// A bad header: file and line.
	_, err = loadMOT(t, text, strings.Replace(pullMOT, "endheader\n", "", 1))
	if err == nil || !strings.Contains(err.Error(), "bad header: no line \"endheader\"") {
		t.Fatalf("bad header: %v", err)
	}
}
