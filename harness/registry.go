package harness

import (
	"fmt"
	"maps"
	"sort"
	"sync"
	"sync/atomic"
)

// Registry is a set of harness specs by name. A value never changes: With
// and Without return new registries. [Default] is the process registry the
// harness packages register into from their init functions (the only
// global mutable state of the project); a [Config] may plan with another
// one (Config.Registry), e.g. Default().With(spec) in a test.
type Registry struct {
	specs map[string]Spec
}

var (
	mu      sync.Mutex // serializes Register
	current atomic.Pointer[Registry]
)

// Default returns the process registry as it is now.
func Default() *Registry {
	if r := current.Load(); r != nil {
		return r
	}
	return &Registry{}
}

// With returns a registry holding r's specs and s. An empty name, a missing
// request graph, a bad variant declaration or a name r already holds is an
// error.
func (r *Registry) With(s Spec) (*Registry, error) {
	if s.Name == "" {
		return nil, fmt.Errorf("harness: register: empty name")
	}
	if s.Request == nil {
		return nil, fmt.Errorf("harness: register %q: no request graph", s.Name)
	}
	if err := s.checkVariants(); err != nil {
		return nil, fmt.Errorf("harness: register %q: %w", s.Name, err)
	}
	if s.Name != NativeName {
		for _, w := range s.Wires {
			if s.routeKind(w) == "" {
				return nil, fmt.Errorf("harness: register %q: no route kind for the %s wire (Spec.Routes)", s.Name, w)
			}
		}
	}
	if _, dup := r.specs[s.Name]; dup {
		return nil, fmt.Errorf("harness: register %q: already registered", s.Name)
	}
	specs := make(map[string]Spec, len(r.specs)+1)
	maps.Copy(specs, r.specs)
	specs[s.Name] = s
	return &Registry{specs: specs}, nil
}

// Without returns a registry holding r's specs but the one called name.
func (r *Registry) Without(name string) *Registry {
	if _, ok := r.specs[name]; !ok {
		return r
	}
	specs := maps.Clone(r.specs)
	delete(specs, name)
	return &Registry{specs: specs}
}

// Lookup returns the harness called name ("" means native).
func (r *Registry) Lookup(name string) (Spec, bool) {
	if name == "" {
		name = NativeName
	}
	s, ok := r.specs[name]
	return s, ok
}

// All returns every harness of r, sorted by name.
func (r *Registry) All() []Spec {
	out := make([]Spec, 0, len(r.specs))
	for _, s := range r.specs {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
