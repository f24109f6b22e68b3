package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/manifest"
	"github.com/kinfer/kinfer/host/run"
	"github.com/kinfer/kinfer/host/study"
)

// Bundle is what a worker needs to evaluate a run's chunks: the study file
// and every file it reads (datasets, the init file, plugin manifests and
// modules), each by sha256 and by its path relative to the files' common
// directory, so that the study's relative references resolve the same on
// the worker. It is stored in the object store under the sha256 of its
// JSON, which every chunk names: a worker executes nothing whose digest
// the bundle does not pin.
type Bundle struct {
	ABI    int    `json:"abi"` // abi.Version of the run
	Kinfer string `json:"kinfer"`
	// Revision and Platform are the run's program (VCS revision, or
	// "unknown") and GOOS/GOARCH: a worker built otherwise could compute
	// other numbers (another builtin's code, another architecture's
	// floating point), so it refuses the run's chunks.
	Revision string             `json:"revision"`
	Platform string             `json:"platform"`
	Study    string             `json:"study"` // the study file's path in Files
	Files    []BundleFile       `json:"files"`
	Previous map[string]float64 `json:"previous,omitempty"` // a previous stage's values (study.Options.Previous)
}

// BundleFile is one file of a bundle.
type BundleFile struct {
	Role   string `json:"role"` // as in summary.json's provenance inputs
	Path   string `json:"path"` // slash-separated, relative to the bundle's root
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// NewBundle describes the loaded study s (and the previous stage's values
// it was loaded with), with the local path of each file.
func NewBundle(s *study.Study, previous map[string]float64) (*Bundle, []string, error) {
	ins, err := run.Inputs(s)
	if err != nil {
		return nil, nil, err
	}
	root := filepath.Dir(ins[0].Path)
	for _, in := range ins {
		for !within(root, in.Path) {
			root = filepath.Dir(root)
		}
	}
	bi := run.BuildInfo()
	b := &Bundle{ABI: abi.Version, Kinfer: run.Version, Revision: bi.VCSRevision, Platform: bi.Platform, Previous: previous}
	var local []string
	seen := map[string]bool{}
	for _, in := range ins {
		rel, err := filepath.Rel(root, in.Path)
		if err != nil {
			return nil, nil, err
		}
		rel = filepath.ToSlash(rel)
		if in.Role == "study" {
			b.Study = rel
		}
		if seen[rel] {
			continue
		}
		seen[rel] = true
		st, err := os.Stat(in.Path)
		if err != nil {
			return nil, nil, err
		}
		b.Files = append(b.Files, BundleFile{Role: in.Role, Path: rel, SHA256: in.SHA256, Size: st.Size()})
		local = append(local, in.Path)
	}
	if err := checkRefs(ins[0].Path, b, root); err != nil {
		return nil, nil, err
	}
	return b, local, nil
}

// within reports whether path is dir or inside it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// encode is the bundle's JSON and its sha256.
func (b *Bundle) encode() ([]byte, string) {
	data, _ := json.Marshal(b)
	sum := sha256.Sum256(data)
	return data, hex.EncodeToString(sum[:])
}

// upload puts the bundle's files (those not there yet) and the bundle
// itself into the object store, and returns the bundle's digest. Objects
// are stored in pieces that fit the server's max payload maxPayload.
func (b *Bundle) upload(ctx context.Context, obs jetstream.ObjectStore, local []string, maxPayload int64) (string, error) {
	put := func(name string, data []byte) error {
		piece := uint32(min(128<<10, payloadLimit(maxPayload)))
		_, err := obs.Put(ctx, jetstream.ObjectMeta{Name: name, Opts: &jetstream.ObjectMetaOptions{ChunkSize: piece}}, bytes.NewReader(data))
		return err
	}
	for i, f := range b.Files {
		if info, err := obs.GetInfo(ctx, f.SHA256); err == nil && info.Size == uint64(f.Size) {
			continue
		}
		data, err := os.ReadFile(local[i])
		if err != nil {
			return "", err
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != f.SHA256 {
			return "", fmt.Errorf("%s changed while the run started (sha256 %x, was %s)", local[i], sum, f.SHA256)
		}
		if err := put(f.SHA256, data); err != nil {
			return "", fmt.Errorf("uploading %s: %w", local[i], err)
		}
	}
	data, sum := b.encode()
	if _, err := obs.GetInfo(ctx, sum); err != nil {
		if err := put(sum, data); err != nil {
			return "", fmt.Errorf("uploading the study bundle: %w", err)
		}
	}
	return sum, nil
}

// sameProgram refuses a run made by another kinfer: another version,
// another known VCS revision, or another platform.
func (b *Bundle) sameProgram() error {
	bi := run.BuildInfo()
	switch {
	case b.Kinfer != run.Version:
		return declined{fmt.Errorf("the run is kinfer %s, this worker kinfer %s: run workers of the run's version", b.Kinfer, run.Version)}
	case b.Revision != "unknown" && bi.VCSRevision != "unknown" && b.Revision != bi.VCSRevision:
		return declined{fmt.Errorf("the run's kinfer is revision %s, this worker's %s: run workers built from the run's revision", b.Revision, bi.VCSRevision)}
	case b.Platform != bi.Platform:
		return declined{fmt.Errorf("the run is on %s, this worker on %s: floating-point results may differ between platforms", b.Platform, bi.Platform)}
	}
	return nil
}

// fetchVerified gets object name (a sha256) from the object store, or from
// the cache directory, and checks its content against the name.
//
// max bounds the object's size: the object store is written by whoever can
// publish to the server, and the object is read into memory.
func fetchVerified(ctx context.Context, obs jetstream.ObjectStore, cache, sum string, max int64) ([]byte, error) {
	if len(sum) != 64 {
		return nil, refusal{fmt.Errorf("%q is not a sha256", sum)}
	}
	if _, err := hex.DecodeString(sum); err != nil {
		return nil, refusal{fmt.Errorf("%q is not a sha256", sum)}
	}
	path := filepath.Join(cache, "objects", sum)
	if st, err := os.Stat(path); err == nil && st.Size() <= max {
		if data, err := os.ReadFile(path); err == nil {
			if s := sha256.Sum256(data); hex.EncodeToString(s[:]) == sum {
				return data, nil
			}
		}
	}
	obj, err := obs.Get(ctx, sum)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, missing{refusal{fmt.Errorf("object %s is not on the server", sum)}}
	}
	if err != nil {
		return nil, fmt.Errorf("object %s: %w", sum, err)
	}
	defer obj.Close()
	if info, err := obj.Info(); err == nil && info.Size > uint64(max) {
		return nil, refusal{fmt.Errorf("object %s: %d bytes, more than the %d expected", sum, info.Size, max)}
	}
	data, err := io.ReadAll(io.LimitReader(obj, max+1))
	if err != nil {
		return nil, fmt.Errorf("object %s: %w", sum, err)
	}
	if int64(len(data)) > max {
		return nil, refusal{fmt.Errorf("object %s: more than the %d bytes expected", sum, max)}
	}
	if s := sha256.Sum256(data); hex.EncodeToString(s[:]) != sum {
		return nil, refusal{fmt.Errorf("object %s: content has sha256 %x", sum, s)}
	}
	// The cache copy is best effort (the data is verified and returned
	// either way), but a failed write or rename (a full disk) must not
	// leave its temporary file: one per delivery would fill the cache.
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err == nil {
		tmp := path + ".tmp" + newRunID()
		if os.WriteFile(tmp, data, 0o600) != nil || os.Rename(tmp, path) != nil {
			os.Remove(tmp)
		}
	}
	return data, nil
}

// materialize fetches bundle sum and its files into cache/bundles/<sum>/
// (verifying each digest) and returns the bundle and the study file's
// local path.
func materialize(ctx context.Context, obs jetstream.ObjectStore, cache, sum string, maxFile int64) (*Bundle, string, error) {
	data, err := fetchVerified(ctx, obs, cache, sum, maxBundleBytes)
	if err != nil {
		return nil, "", fmt.Errorf("study bundle: %w", err)
	}
	var b Bundle
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		// A newer kinfer's bundle may carry fields this worker does not
		// know: that is this worker's version, not the run's fault.
		var other Bundle
		if json.Unmarshal(data, &other) == nil && (other.ABI != abi.Version || other.sameProgram() != nil) {
			if other.ABI != abi.Version {
				return nil, "", declined{fmt.Errorf("the run speaks kinfer ABI %d, this worker (kinfer %s) ABI %d", other.ABI, run.Version, abi.Version)}
			}
			return nil, "", other.sameProgram()
		}
		return nil, "", refusal{fmt.Errorf("study bundle %s: %w", sum, err)}
	}
	if b.ABI != abi.Version {
		return nil, "", declined{fmt.Errorf("the run speaks kinfer ABI %d, this worker (kinfer %s) ABI %d", b.ABI, run.Version, abi.Version)}
	}
	if err := b.sameProgram(); err != nil {
		return nil, "", err
	}
	if err := b.check(); err != nil {
		return nil, "", refusal{fmt.Errorf("study bundle %s: %w", sum, err)}
	}
	for _, f := range b.Files {
		if f.Size > maxFile {
			return nil, "", declined{fmt.Errorf("study bundle %s: file %s: size %d is more than this worker's limit of %d bytes (kinfer worker --max-file-bytes)", sum, f.Path, f.Size, maxFile)}
		}
	}
	dir := filepath.Join(cache, "bundles", sum)
	for _, f := range b.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if !filepath.IsLocal(filepath.FromSlash(f.Path)) {
			return nil, "", refusal{fmt.Errorf("study bundle %s: file path %q leaves the bundle", sum, f.Path)}
		}
		if err := fetchFile(ctx, obs, cache, f.SHA256, f.Size, p); err != nil {
			return nil, "", fmt.Errorf("%s %s: %w", f.Role, f.Path, err)
		}
	}
	return &b, filepath.Join(dir, filepath.FromSlash(b.Study)), nil
}

// fetchFile makes dst hold object sum (at most max bytes), verified: kept
// when it already does, else linked or copied from the cache's copy
// (cache/objects/<sum>), else streamed from the object store through a
// temporary file beside dst while its digest is computed, then renamed
// into place and linked into the cache. The worker's memory does not grow
// with the file (audit 6: files were read whole into memory, so a bundle
// carrying a 900 MB file its study never reads took a worker to 2.3 GB).
// Trouble with the worker's own disk is a decline (another worker may
// take the chunk), a wrong object the bundle's refusal.
func fetchFile(ctx context.Context, obs jetstream.ObjectStore, cache, sum string, max int64, dst string) error {
	if _, err := hex.DecodeString(sum); err != nil || len(sum) != 64 {
		return refusal{fmt.Errorf("%q is not a sha256", sum)}
	}
	if got, err := run.FileSHA256(dst); err == nil && got == sum {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return declined{fmt.Errorf("this worker's cache: %w", err)}
	}
	tmp := dst + ".tmp" + newRunID()
	defer os.Remove(tmp) // gone after a rename; a failure leaves nothing
	cached := filepath.Join(cache, "objects", sum)
	if st, err := os.Lstat(cached); err == nil && st.Mode().IsRegular() && st.Size() <= max {
		if got, err := run.FileSHA256(cached); err == nil && got == sum {
			if os.Link(cached, tmp) == nil || copyFile(cached, tmp) == nil {
				if err := os.Rename(tmp, dst); err != nil {
					return declined{fmt.Errorf("this worker's cache: %w", err)}
				}
				return nil
			}
		}
	}
	obj, err := obs.Get(ctx, sum)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return missing{refusal{fmt.Errorf("object %s is not on the server", sum)}}
	}
	if err != nil {
		return fmt.Errorf("object %s: %w", sum, err)
	}
	defer obj.Close()
	if info, err := obj.Info(); err == nil && info.Size > uint64(max) {
		return refusal{fmt.Errorf("object %s: %d bytes, more than the %d expected", sum, info.Size, max)}
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return declined{fmt.Errorf("this worker's cache: %w", err)}
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(obj, max+1))
	if cerr := f.Close(); err == nil && cerr != nil {
		return declined{fmt.Errorf("this worker's cache: %w", cerr)}
	}
	if err != nil {
		return fmt.Errorf("object %s: %w", sum, err)
	}
	if n > max {
		return refusal{fmt.Errorf("object %s: more than the %d bytes expected", sum, max)}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sum {
		return refusal{fmt.Errorf("object %s: content has sha256 %s", sum, got)}
	}
	if err := os.Rename(tmp, dst); err != nil {
		return declined{fmt.Errorf("this worker's cache: %w", err)}
	}
	// The cache's copy is best effort: a link, and nothing left behind.
	if os.MkdirAll(filepath.Dir(cached), 0o700) == nil {
		ctmp := cached + ".tmp" + newRunID()
		if os.Link(dst, ctmp) != nil || os.Rename(ctmp, cached) != nil {
			os.Remove(ctmp)
		}
	}
	return nil
}

// copyFile copies the regular file src to a new file dst (0600).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	return out.Close()
}

// maxBundleBytes bounds a bundle's JSON (a study's file list).
const maxBundleBytes = 16 << 20

// DefaultMaxFileBytes is WorkerOptions.MaxFileBytes's default.
const DefaultMaxFileBytes = 1 << 30

// check checks a fetched bundle before any of its files is fetched: every
// path is local and named once, every size ≥ 0, and the study file is one
// of the files (a study path outside them would be read, and its errors
// sent to whoever published the chunk, from anywhere on the worker's file
// system). The worker's own size limit is checked apart (materialize): a
// file above it is this worker's refusal, not the bundle's fault.
func (b *Bundle) check() error {
	paths := map[string]bool{}
	for _, f := range b.Files {
		if !filepath.IsLocal(filepath.FromSlash(f.Path)) || strings.Contains(f.Path, "\\") || path.Clean(f.Path) != f.Path || f.Path == "." {
			return fmt.Errorf("file path %q leaves the bundle", f.Path)
		}
		if paths[f.Path] {
			return fmt.Errorf("file path %q named twice", f.Path)
		}
		paths[f.Path] = true
		if f.Size < 0 {
			return fmt.Errorf("file %s: size %d", f.Path, f.Size)
		}
	}
	if b.Study == "" {
		return errors.New("names no study file")
	}
	if !slices.ContainsFunc(b.Files, func(f BundleFile) bool { return f.Path == b.Study && f.Role == "study" }) {
		return fmt.Errorf("study file %q is not one of its files", b.Study)
	}
	return nil
}

// checkPinned checks that the study loaded from a bundle read only the
// bundle's files, with the bundle's digests: a study or manifest naming
// an absolute path would otherwise reach outside it.
func checkPinned(s *study.Study, b *Bundle, dir string) error {
	ins, err := run.Inputs(s)
	if err != nil {
		return err
	}
	var errs []error
	for _, in := range ins {
		rel, err := filepath.Rel(dir, in.Path)
		ok := err == nil && filepath.IsLocal(rel) && slices.ContainsFunc(b.Files, func(f BundleFile) bool {
			return f.Path == filepath.ToSlash(rel) && f.SHA256 == in.SHA256
		})
		if !ok {
			errs = append(errs, fmt.Errorf("%s %s (sha256 %s) is not pinned by the run's bundle", in.Role, in.Path, in.SHA256))
		}
	}
	return errors.Join(errs...)
}

// checkRefs checks, before anything is loaded or executed, that every file
// the study at studyPath names (plugin manifests, the modules they name,
// a surrogate model's file, datasets, the init file) lies inside dir and is one of the bundle's
// files with the bundle's digest. A run checks its own study with it (dir
// the bundle's root) and a worker the study it fetched.
func checkRefs(studyPath string, b *Bundle, dir string) error {
	f, _, err := study.Decode(studyPath)
	if err != nil {
		return err
	}
	sdir := filepath.Dir(studyPath)
	var errs []error
	pinned := func(what, p, base string) string {
		if filepath.IsAbs(p) {
			errs = append(errs, fmt.Errorf("%s %s: a remote run needs paths relative to the file that names them (a worker has its own file system)", what, p))
			return ""
		}
		p = filepath.Join(base, p)
		rel, err := filepath.Rel(dir, p)
		if err != nil || !filepath.IsLocal(rel) {
			errs = append(errs, fmt.Errorf("%s %s is outside the study's files (%s): remote runs ship files relative to the study", what, p, dir))
			return ""
		}
		i := slices.IndexFunc(b.Files, func(bf BundleFile) bool { return bf.Path == filepath.ToSlash(rel) })
		if i < 0 {
			errs = append(errs, fmt.Errorf("%s %s is not in the run's bundle", what, p))
			return ""
		}
		if sum, err := run.FileSHA256(p); err != nil || sum != b.Files[i].SHA256 {
			errs = append(errs, fmt.Errorf("%s %s does not have the sha256 %s the run pinned", what, p, b.Files[i].SHA256))
			return ""
		}
		return p
	}
	plugin := func(table string, m map[string]any) {
		p, ok := m["plugin"].(string)
		if !ok {
			return
		}
		if mp := pinned(table+" plugin manifest", p, sdir); mp != "" {
			man, err := manifest.Load(mp)
			if err != nil {
				errs = append(errs, err)
				return
			}
			pinned(table+" plugin module", man.Wasm, filepath.Dir(mp))
		}
	}
	plugin("[model]", f.Model)
	if p, ok := f.Model["file"].(string); ok {
		// A surrogate model's file (audit 6: a worker opened and decoded
		// any file of its own, /etc/shadow, and sent back why it failed).
		pinned("[model] file", p, sdir)
	}
	for _, l := range f.Likelihood {
		plugin("[[likelihood]]", l)
	}
	plugin("[method]", f.Method)
	for _, d := range f.Data {
		if d.File != "" {
			pinned("dataset "+d.Name, d.File, sdir)
		}
	}
	if f.Init != "" {
		pinned("init file", f.Init, sdir)
	}
	return errors.Join(errs...)
}
