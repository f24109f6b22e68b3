package run

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kinfer/kinfer/host/study"
)

// A record from elsewhere: special files, oversized files and list bombs
// are refused with an error naming the file, before anything is decoded.
func TestReadRecordRefuses(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "summary.json")
	var sum Summary
	check := func(what string, want ...string) {
		t.Helper()
		err := ReadRecord(p, MaxSummaryBytes, &sum)
		if err == nil {
			t.Fatalf("%s: accepted", what)
		}
		for _, w := range append(want, p) {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v does not mention %q", what, err, w)
			}
		}
		os.Remove(p)
	}
	if err := syscall.Mkfifo(p, 0o644); err == nil {
		check("a named pipe", "named pipe")
	}
	if err := os.Symlink("/dev/zero", p); err == nil {
		check("/dev/zero", "character device")
	}
	f, _ := os.Create(p)
	f.Truncate(MaxSummaryBytes + 1)
	f.Close()
	check("a sparse file over the cap", "64 MiB")
	// A million empty objects in an interface: ≈ 3 MB of text, ≈ 70
	// MB decoded.
	os.WriteFile(p, []byte(`{"method_report":[`+strings.Repeat("{},", 1_000_000)+`{}]}`), 0o644)
	check("empty objects in the method report", "per byte")
	os.WriteFile(p, []byte(`{"provenance":{"inputs":[`+strings.Repeat("{},", 70_000)+`{}]}}`), 0o644)
	check("inputs over their maxlen", `"provenance.inputs"`)
	os.WriteFile(p, []byte(`{"study":"x"`), 0o644)
	check("a truncated record", "unexpected end")
	// A legitimate record, with a key a later kinfer may add.
	os.WriteFile(p, []byte(`{"study":"x","samples":3,"later":[{},{}],"method_report":{"chains":4,"acceptance":[0.2,0.3]}}`), 0o644)
	if err := ReadRecord(p, MaxSummaryBytes, &sum); err != nil || sum.Study != "x" || sum.Samples != 3 {
		t.Errorf("a legitimate record: %v, %+v", err, sum)
	}
}

// The lock file is not opened through a symbolic link: the pid would be
// written into (and then truncated out of) a file outside the directory.
func TestLockDirRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("victim\n"), 0o644)
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	if err := os.Symlink("../victim", filepath.Join(out, LockFile)); err != nil {
		t.Skip("no symlinks:", err)
	}
	l, err := LockDir(out)
	if err == nil {
		l.Unlock()
		t.Fatal("locked through a symbolic link")
	}
	if !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("error %v", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "victim\n" {
		t.Errorf("the link's target was changed: %q", b)
	}
}

// The journal is not reopened (and truncated) through a link nor read
// from a named pipe, and its samples must fit in the memory budget.
func TestOpenJournalRefuses(t *testing.T) {
	dir := t.TempDir()
	j, err := createJournal(dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	j.close()
	// A count the file cannot hold is the record's fault, not the
	// budget's (audit 7).
	if _, _, err := openJournal(dir, 2, 1<<30, 1<<30); err == nil || !strings.Contains(err.Error(), "holds 16 bytes, the checkpoint needs") || resumable(err) {
		t.Errorf("2^30 samples in a 16-byte journal: %v (resumable: %v)", err, resumable(err))
	}
	// A (sparse) journal that holds them: then the budget refuses.
	if err := os.Truncate(filepath.Join(dir, JournalFile), journalHeader+(1<<30)*4*8); err != nil {
		t.Fatal(err)
	}
	if _, _, err := openJournal(dir, 2, 1<<30, 1<<30); err == nil || !strings.Contains(err.Error(), "memory budget") || !resumable(err) {
		t.Errorf("2^30 samples in a budget of 1 GiB: %v (resumable with a larger budget: %v)", err, resumable(err))
	}
	if err := os.Truncate(filepath.Join(dir, JournalFile), journalHeader); err != nil {
		t.Fatal(err)
	}
	if _, _, err := openJournal(dir, 2, -1, 1<<30); err == nil {
		t.Error("-1 samples accepted")
	}
	p := filepath.Join(dir, JournalFile)
	victim := filepath.Join(dir, "victim")
	os.Rename(p, victim)
	if err := os.Symlink("victim", p); err != nil {
		t.Skip("no symlinks:", err)
	}
	before, _ := os.ReadFile(victim)
	if _, _, err := openJournal(dir, 2, 0, 1<<30); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a journal through a link: %v", err)
	}
	if after, _ := os.ReadFile(victim); string(after) != string(before) {
		t.Error("the link's target was changed")
	}
	os.Remove(p)
	if err := syscall.Mkfifo(p, 0o644); err == nil {
		if _, _, err := openJournal(dir, 2, 0, 1<<30); err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("a journal that is a named pipe: %v", err)
		}
	}
}

// The inputs' digests are of the bytes the study loaded, not of a second
// read: a data file replaced after the load is recorded as loaded (audit
// 17: 4 of 150 runs recorded the replacement's digest beside the fit of
// the original).
func TestInputsDigestWhatWasLoaded(t *testing.T) {
	dir := t.TempDir()
	studyPath := filepath.Join(dir, "study.toml")
	data := filepath.Join(dir, "force_length.csv")
	orig, _ := os.ReadFile("../../examples/quickstart/force_length.csv")
	os.WriteFile(studyPath, must(os.ReadFile("../../examples/quickstart/study.toml")), 0o644)
	os.WriteFile(data, orig, 0o644)
	s, err := study.Load(context.Background(), studyPath, study.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	os.WriteFile(data, append(append([]byte(nil), orig...), "33.1,600\n"...), 0o644)
	ins, err := Inputs(s)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(orig)
	for _, in := range ins {
		if in.Role == "data pull-test" && in.SHA256 != hex.EncodeToString(h[:]) {
			t.Errorf("data recorded with sha256 %s, the loaded bytes' is %x", in.SHA256, h)
		}
	}
}
