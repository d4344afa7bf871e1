package textcall

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Kind says what an [Event] carries.
type Kind uint8

const (
	// Text is assistant text with the markup taken out (Event.Text).
	Text Kind = iota
	// Reasoning is reasoning text (Event.Text).
	Reasoning
	// CallBegin starts a tool call: Event.Name, and Event.ID when the text
	// carried one.
	CallBegin
	// CallArgs is a fragment of the open call's arguments (Event.Text); the
	// fragments of one call join into one JSON object.
	CallArgs
	// CallEnd ends the open call.
	CallEnd
	// Malformed says markup could not be parsed (Event.Text: why). It voids
	// the open call, if any (its CallBegin and CallArgs are to be
	// discarded); the original text of the markup follows as Text.
	Malformed
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case Text:
		return "text"
	case Reasoning:
		return "reasoning"
	case CallBegin:
		return "call_begin"
	case CallArgs:
		return "call_args"
	case CallEnd:
		return "call_end"
	case Malformed:
		return "malformed"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Event is one piece of a parsed reply.
type Event struct {
	Kind Kind
	// Text is the text of Text, Reasoning and CallArgs, and the reason of
	// Malformed.
	Text string
	// Name is the tool name of a CallBegin.
	Name string
	// ID is the call id a CallBegin's markup carried ("" when none).
	ID string
}

// Parser reads one reply's text in pieces. A Parser is used by one goroutine
// and is not reused for another reply.
type Parser interface {
	// Feed consumes the next piece of text and appends the events it
	// completes to out. Text that cannot start a marker is appended at once.
	Feed(out []Event, s string) []Event
	// Close ends the reply: held text is given back, a call whose markup is
	// complete enough is ended, and unterminated markup is reported
	// (Malformed) and given back as Text.
	Close(out []Event) []Event
	// Quiet reports whether Feed(s) would give s back unchanged as one
	// Text event and change no state; if so the caller may pass s on
	// itself. It must not retain s.
	Quiet(s string) bool
}

// Config is what a parser may know about the request it answers.
type Config struct {
	// Schemas types raw parameter values by the request's tool schemas;
	// nil types nothing (every raw value stays a string).
	Schemas Schemas
	// Model is the model name; auto uses it to prefer a family's format.
	Model string
}

// Format is one convention of writing tool calls as text.
type Format struct {
	// Name is the format's name (--tool-format NAME).
	Name string
	// Summary says in one line what the markup looks like.
	Summary string
	// New returns a parser for one reply.
	New func(Config) Parser
	// Starts are the texts that begin this format's markup; auto locks on
	// the format whose start it sees first (and that claims it).
	Starts []string
	// Claim reports, for text rest that begins with one of Starts, whether
	// it is this format's markup; atStart says nothing but white space
	// came before it in the reply. Nil claims every start.
	Claim func(rest string, atStart bool) Claim
	// Models are lowercase substrings of model names that prefer this
	// format when two formats share a start.
	Models []string
	// ModelStarts are starts auto looks for only when the model name
	// matches Models: markup too close to prose to look for in every
	// reply (gpt-oss harmony with its special tokens stripped).
	ModelStarts []string
	// LeadStarts are starts auto looks for only as the first text of the
	// reply (after white space): a bare JSON call. LeadClaim decides, told
	// the request (its tools), whether the reply is this format's.
	LeadStarts []string
	LeadClaim  func(rest string, cfg Config) Claim
	// Render writes calls as the model writes them, in one reply: the
	// render half of the format, which its parser reads back. Arguments
	// are written as given (JSON formats) or member by member (formats
	// with one element per parameter); a call's ID is written where the
	// markup carries one.
	Render func(calls []Call) string
	// Prompt is the half that puts tools into a prompt (stages/toolprompt);
	// nil when the format has none.
	Prompt *Prompt
}

// Claim is a format's answer to "is this my markup?".
type Claim uint8

const (
	// ClaimNo: not this format's markup.
	ClaimNo Claim = iota
	// ClaimYes: this format's markup.
	ClaimYes
	// ClaimMore: cannot tell yet; more text is needed.
	ClaimMore
)

var (
	registryMu sync.RWMutex
	registry   = map[string]*Format{}
	// startIndex caches what auto needs of the registry (rebuilt after a
	// Register).
	startIndex *autoIndex
)

// Register adds a format to the registry; a format's file registers it in
// its init. It panics on an empty or duplicate name (a programming error).
func Register(f Format) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if f.Name == "" || f.New == nil {
		panic("textcall: Register: format without name or New")
	}
	if _, dup := registry[f.Name]; dup || f.Name == Auto || f.Name == Off {
		panic("textcall: Register: duplicate format " + f.Name)
	}
	registry[f.Name] = &f
	startIndex = nil
}

// Names of the two choices that are not formats.
const (
	// Auto recognizes the format by its markers.
	Auto = "auto"
	// Off recovers nothing: the text is passed on as it is.
	Off = "off"
)

// Lookup returns the registered format name.
func Lookup(name string) (*Format, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	f, ok := registry[name]
	return f, ok
}

// Names returns the registered formats' names, sorted.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// formats returns the registered formats, sorted by name.
func formats() []*Format {
	registryMu.RLock()
	defer registryMu.RUnlock()
	fs := make([]*Format, 0, len(registry))
	for _, f := range registry {
		fs = append(fs, f)
	}
	slices.SortFunc(fs, func(a, b *Format) int { return strings.Compare(a.Name, b.Name) })
	return fs
}

// CheckName returns nil when name is auto, off or a registered format, and
// otherwise an error that lists the choices.
func CheckName(name string) error {
	if name == Auto || name == Off {
		return nil
	}
	if _, ok := Lookup(name); ok {
		return nil
	}
	return fmt.Errorf("unknown tool format %q (want %s, %s or one of: %s)", name, Auto, Off, strings.Join(Names(), ", "))
}

// NewParser returns a parser for name: a registered format or auto. Off has
// no parser (nil, nil).
func NewParser(name string, cfg Config) (Parser, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	switch name {
	case Off:
		return nil, nil
	case Auto:
		return newAuto(cfg), nil
	}
	f, _ := Lookup(name)
	return f.New(cfg), nil
}
