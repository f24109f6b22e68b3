package meter

import (
	"errors"
	"fmt"
)

// Info is what a host needs to know of a module before compiling it: every
// import (of any kind) and the limits of the memory it defines. Reading
// them here gives errors that name the import or the limit, instead of a
// compiler's generic link or validation failures.
type Info struct {
	Imports   []Import
	HasMemory bool   // a memory is defined (not imported) by the module
	MemMin    uint64 // pages
	MemMax    uint64 // pages; valid when MemHasMax
	MemHasMax bool
	// CodeBytes is the size of the code section (the function bodies);
	// Functions the number of bodies.
	CodeBytes uint64
	Functions uint64
}

// Import is one import of a module.
type Import struct {
	Module, Name string
	Kind         byte // 0 func, 1 table, 2 memory, 3 global, 4 tag
}

func (e Import) String() string {
	return fmt.Sprintf("%s.%s (%s)", e.Module, e.Name, importKindName(e.Kind))
}

func importKindName(k byte) string {
	switch k {
	case 0:
		return "function"
	case 1:
		return "table"
	case 2:
		return "memory"
	case 3:
		return "global"
	case 4:
		return "tag"
	}
	return fmt.Sprintf("kind %d", k)
}

// Scan reads the import and memory sections of a core WebAssembly module
// binary. It validates only what it reads; the compiler validates the rest.
func Scan(b []byte) (*Info, error) {
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return nil, errors.New("not a WebAssembly binary (bad magic)")
	}
	if v := b[4:8]; v[0] != 1 || v[1] != 0 || v[2] != 0 || v[3] != 0 {
		return nil, fmt.Errorf("not a core WebAssembly module (version bytes % x; a component or a future format?)", v)
	}
	info := &Info{}
	r := &reader{b: b, off: 8}
	for !r.done() {
		id, err := r.byte()
		if err != nil {
			return nil, scanErr(err)
		}
		size, err := r.uleb(64)
		if err != nil {
			return nil, scanErr(err)
		}
		body, err := r.bytes(size)
		if err != nil {
			return nil, fmt.Errorf("section %d: %w", id, scanErr(err))
		}
		s := &reader{b: body}
		switch id {
		case secImport:
			if err := scanImports(s, info); err != nil {
				return nil, fmt.Errorf("import section: %w", scanErr(err))
			}
		case secCode:
			info.CodeBytes = size
			if info.Functions, err = s.uleb(64); err != nil {
				return nil, fmt.Errorf("code section: %w", scanErr(err))
			}
		case secMemory:
			n, err := s.uleb(64)
			if err != nil {
				return nil, fmt.Errorf("memory section: %w", scanErr(err))
			}
			if n > 1 {
				return nil, fmt.Errorf("memory section: %d memories; ABI v1 allows one", n)
			}
			if n == 1 {
				flags, min, max, err := s.limits()
				if err != nil {
					return nil, fmt.Errorf("memory section: %w", scanErr(err))
				}
				info.HasMemory, info.MemMin, info.MemMax, info.MemHasMax = true, min, max, flags&1 != 0
			}
		}
	}
	return info, nil
}

// scanErr says "of module" where the reader ran out of bytes.
func scanErr(err error) error {
	if errors.Is(err, errTruncated) {
		return errors.New("unexpected end of module")
	}
	return err
}

func scanImports(s *reader, info *Info) error {
	n, err := s.uleb(64)
	if err != nil {
		return err
	}
	for i := uint64(0); i < n; i++ {
		var e Import
		if e.Module, err = s.name(); err != nil {
			return err
		}
		if e.Name, err = s.name(); err != nil {
			return err
		}
		if e.Kind, err = s.byte(); err != nil {
			return err
		}
		switch e.Kind {
		case 0: // function: type index
			_, err = s.uleb(64)
		case 1: // table: reftype, limits
			if _, err = s.byte(); err == nil {
				_, _, _, err = s.limits()
			}
		case 2: // memory: limits
			_, _, _, err = s.limits()
		case 3: // global: valtype, mutability
			if _, err = s.byte(); err == nil {
				_, err = s.byte()
			}
		case 4: // tag: attribute, type index
			if _, err = s.byte(); err == nil {
				_, err = s.uleb(64)
			}
		default:
			return fmt.Errorf("import %s.%s: unknown kind %d", e.Module, e.Name, e.Kind)
		}
		if err != nil {
			return fmt.Errorf("import %s.%s: %w", e.Module, e.Name, err)
		}
		info.Imports = append(info.Imports, e)
	}
	return nil
}
