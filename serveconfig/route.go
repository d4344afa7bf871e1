package serveconfig

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Attempt is one upstream a request may go to, and the model name it gets
// there.
type Attempt struct {
	Upstream *Upstream
	Model    string
}

// Route is where a model name goes: the entry that matched and its
// attempts in order (the first upstream, then the fallbacks).
type Route struct {
	Entry    *Model
	Attempts []Attempt
}

// UnknownModelError is the error of Route for a model no entry matches.
type UnknownModelError struct {
	// Model is the name asked for.
	Model string
	// Configured lists the configured names and patterns, in the file's
	// order.
	Configured []string
}

func (e *UnknownModelError) Error() string {
	if e.Model == "" {
		return fmt.Sprintf("the request names no model; this server serves: %s", strings.Join(e.Configured, ", "))
	}
	return fmt.Sprintf("model %q is not served here; this server serves: %s", e.Model, strings.Join(e.Configured, ", "))
}

// Route returns the route of model: the first entry that matches it
// (ignoring case) and its upstreams, each with the model name sent there.
// A model no entry matches is an *UnknownModelError.
func (c *Config) Route(model string) (Route, error) {
	m := c.match(model)
	if m == nil {
		return Route{}, &UnknownModelError{Model: model, Configured: c.ModelNames()}
	}
	return c.routeOf(m, model), nil
}

// Conditions of a model entry (Model.When).
const (
	// WhenThinking routes the requests that ask for reasoning.
	WhenThinking = "thinking"
	// WhenLongContext routes the requests whose input is estimated at
	// the entry's long_context_tokens or more.
	WhenLongContext = "long_context"
)

// DefaultLongContextTokens is long_context_tokens when the entry sets none.
const DefaultLongContextTokens = 60000

// Request is what a request is, for the entries with a condition.
type Request struct {
	// Thinking says the request asks for reasoning.
	Thinking bool
	// InputTokens estimates the request's input tokens; nil when no entry
	// needs it (it is called only for a long_context entry whose name
	// matches).
	InputTokens func() int64
}

// RouteFor is Route for a request: the first entry with a condition whose
// name matches model and whose condition r meets, else Route(model).
func (c *Config) RouteFor(model string, r Request) (Route, error) {
	low := strings.ToLower(model)
	for _, m := range c.Models {
		if m.When == "" || model == "" || !(m.lower == low || m.pattern && globMatch(m.lower, low)) {
			continue
		}
		switch m.When {
		case WhenThinking:
			if !r.Thinking {
				continue
			}
		case WhenLongContext:
			if r.InputTokens == nil || r.InputTokens() < m.LongContextTokens {
				continue
			}
		}
		return c.routeOf(m, model), nil
	}
	return c.Route(model)
}

// routeOf is the route of entry m for model.
func (c *Config) routeOf(m *Model, model string) Route {
	r := Route{Entry: m, Attempts: make([]Attempt, len(m.Upstreams))}
	for i, u := range m.Upstreams {
		r.Attempts[i] = Attempt{Upstream: u, Model: m.upstreamModel(u, model)}
	}
	return r
}

// match returns the first entry matching model, or nil. An exact entry
// that an earlier pattern matches is refused when the file is read, so an
// exact entry found is the first match.
func (c *Config) match(model string) *Model {
	if model == "" {
		return nil
	}
	low := strings.ToLower(model)
	if m := c.exact[low]; m != nil {
		return m
	}
	for _, m := range c.Models {
		if m.pattern && m.When == "" && globMatch(m.lower, low) {
			return m
		}
	}
	return nil
}

// ModelNames lists the model names and patterns of the entries, in order.
func (c *Config) ModelNames() []string {
	names := make([]string, len(c.Models))
	for i, m := range c.Models {
		names[i] = m.Name
	}
	return names
}

// Upstream returns the upstream called name, or nil.
func (c *Config) Upstream(name string) *Upstream { return c.upstreams[name] }

// globMatch reports whether name matches pattern, where * matches any run
// of bytes (slashes too: model names have organizations) and ? one
// character.
func globMatch(pattern, name string) bool {
	// The classic iterative matcher: on a mismatch, go back to the last *
	// and let it take one more byte.
	p, n := 0, 0
	star, mark := -1, 0
	for n < len(name) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, n
			p++
		case p < len(pattern) && pattern[p] == '?':
			_, size := utf8.DecodeRuneInString(name[n:])
			p++
			n += size
		case p < len(pattern) && pattern[p] == name[n]:
			p++
			n++
		case star >= 0:
			p = star + 1
			mark++
			n = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
