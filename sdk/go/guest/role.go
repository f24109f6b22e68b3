package guest

import (
	"fmt"

	"github.com/kinfer/kinfer/abi"
)

// Capability ties an optional capability of a role to the Go interface that
// provides it: Has reports whether a value implements it, Method names the
// method for error messages. A capability without a Method is a
// declaration (sigma_free, batch): SpecOf never adds it, only the author's
// spec lists it.
//
// Refuses, when set, makes the spec's listing enough (rows_independent,
// which has no export: ABI.md §4): Implements then refuses only a value
// for which Refuses is true (a method that says no), not one without the
// method.
type Capability struct {
	Name    abi.Capability
	Has     func(v any) bool
	Method  string
	Refuses func(v any) bool
}

// Role is what the role packages (model, likelihood, method) share: their
// kind and the capabilities a component of that kind may list.
type Role struct {
	Kind abi.Kind
	Caps []Capability
}

// SpecOf is the spec of v, a component without settings, with the
// capabilities v implements added (for Serve). It panics if the spec lists
// settings: such a component is served with ServeNew and a constructor.
func (r Role) SpecOf(spec abi.Spec, v any) abi.Spec {
	spec = r.Check(spec)
	if len(spec.Settings) > 0 {
		panic(fmt.Sprintf("kinfer sdk: %s %q lists settings; serve it with %s.ServeNew(spec, constructor)", r.Kind, spec.Name, r.Kind))
	}
	for _, c := range r.Caps {
		// A capability without a method (sigma_free, batch) is a
		// declaration: only the author's spec lists it.
		if c.Method != "" && c.Has(v) && !spec.Has(c.Name) {
			spec.Capabilities = append(spec.Capabilities, c.Name)
		}
	}
	return spec
}

// Check returns a copy of spec (so Serve never appends to a caller's
// package-level spec) after checking its kind and that it lists only this
// role's capabilities; it panics otherwise.
func (r Role) Check(spec abi.Spec) abi.Spec {
	spec.Params = append([]abi.Param(nil), spec.Params...)
	spec.Conditions = append([]abi.Column(nil), spec.Conditions...)
	spec.Outputs = append([]abi.Column(nil), spec.Outputs...)
	spec.Settings = append([]abi.Setting(nil), spec.Settings...)
	spec.Capabilities = append([]abi.Capability(nil), spec.Capabilities...)
	if spec.Kind != r.Kind {
		panic(fmt.Sprintf("kinfer sdk: %s.Serve given a spec of kind %q", r.Kind, spec.Kind))
	}
	for _, c := range spec.Capabilities {
		if r.capability(c) == nil {
			names := make([]string, len(r.Caps))
			for i, rc := range r.Caps {
				names[i] = fmt.Sprintf("%q", rc.Name)
			}
			panic(fmt.Sprintf("kinfer sdk: %s %q lists capability %q; a %s may list %v", r.Kind, spec.Name, c, r.Kind, names))
		}
	}
	return spec
}

// Implements checks that v, built by a constructor, implements every
// capability the spec lists.
func (r Role) Implements(spec abi.Spec, v any) error {
	if v == nil {
		return fmt.Errorf("%s: constructor returned a nil %s", spec.Name, r.Kind)
	}
	for _, name := range spec.Capabilities {
		c := r.capability(name)
		switch {
		case c == nil:
		case c.Refuses != nil:
			if c.Refuses(v) {
				return fmt.Errorf("%s: spec lists capability %q but %T's %s method returns false", spec.Name, name, v, c.Method)
			}
		case !c.Has(v):
			return fmt.Errorf("%s: spec lists capability %q but %T has no %s method", spec.Name, name, v, c.Method)
		}
	}
	return nil
}

func (r Role) capability(name abi.Capability) *Capability {
	for i := range r.Caps {
		if r.Caps[i].Name == name {
			return &r.Caps[i]
		}
	}
	return nil
}

// Implementer returns a Capability.Has for interface T.
func Implementer[T any]() func(any) bool {
	return func(v any) bool { _, ok := v.(T); return ok }
}
