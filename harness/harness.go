// Package harness describes the agents harnessflow can emulate: for each, a
// request graph (history + tools → that agent's native request) and the
// response-direction additions (harness.post) on top of the protocol layer.
// Harness packages register themselves; the registry is the only global
// mutable state of the project.
package harness

import (
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/harnessflow/harnessflow/pipeline"
)

// Wire is an upstream wire protocol.
type Wire string

// The upstream wires.
const (
	WireResponses Wire = "responses"
	WireChat      Wire = "chat"
	WireMessages  Wire = "messages"
)

// Wires lists every wire.
var Wires = []Wire{WireResponses, WireChat, WireMessages}

// ParseWire parses "responses", "chat" or "messages"; anything else is an
// unknown-variant error.
func ParseWire(s string) (Wire, error) {
	switch w := Wire(s); w {
	case WireResponses, WireChat, WireMessages:
		return w, nil
	}
	return "", fmt.Errorf("unknown wire %q: want responses, chat or messages", s)
}

// NativeName is the registry name of the no-harness translation.
const NativeName = "native"

// Harness is one registered agent emulation.
type Harness struct {
	// Name is the configuration name (e.g. "kimi-cli").
	Name string
	// Description is one line for `harnessflow harnesses`.
	Description string
	// Wires lists the upstream wires the harness shapes requests for.
	Wires []Wire
	// RequestGraph builds the request-direction graph for a wire.
	RequestGraph func(wire Wire) (*pipeline.Graph, error)
	// ResponseGraph builds the response-direction graph for a wire (protocol
	// layer plus harness.post), given the run's options.
	ResponseGraph func(wire Wire, opts ResponseOptions) (*pipeline.Graph, error)
}

// Supports reports whether h handles wire.
func (h Harness) Supports(w Wire) bool { return slices.Contains(h.Wires, w) }

var (
	mu       sync.RWMutex
	registry = map[string]Harness{}
)

// Register adds h to the registry. Registering a name twice is an error.
func Register(h Harness) error {
	if h.Name == "" {
		return fmt.Errorf("harness: register: empty name")
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[h.Name]; dup {
		return fmt.Errorf("harness: register %q: already registered", h.Name)
	}
	registry[h.Name] = h
	return nil
}

// MustRegister is Register for package init functions; a duplicate name is a
// programming error.
func MustRegister(h Harness) {
	if err := Register(h); err != nil {
		panic(err)
	}
}

// Lookup returns the harness called name ("" means native).
func Lookup(name string) (Harness, bool) {
	if name == "" {
		name = NativeName
	}
	mu.RLock()
	defer mu.RUnlock()
	h, ok := registry[name]
	return h, ok
}

// All returns every registered harness, sorted by name.
func All() []Harness {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]Harness, 0, len(registry))
	for _, h := range registry {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
