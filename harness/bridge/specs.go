package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The specs below build the Mappings of the usual native tools. Each names
// the JSON keys of the native tool's arguments: an empty key means the
// conventional name given in its comment, and "-" means the native tool has
// no such argument. Unknown arguments are ignored (claude-code's
// run_in_background or Grep's output_mode, opencode's description, ...).

// NoKey says that a native tool has no such argument.
const NoKey = "-"

func keyOr(k, def string) string {
	if k == "" {
		return def
	}
	return k
}

// get returns the key to read, or "" when the tool has none.
func get(k, def string) string {
	if k = keyOr(k, def); k == NoKey {
		return ""
	}
	return k
}

func (a args) need(k string) (string, error) {
	s, err := a.str(k)
	if err == nil && s == "" {
		err = errors.New(k + ": missing")
	}
	return s, err
}

// argReader reads one call's arguments for a spec; the first error sticks
// and later reads give zero values. An empty key (the tool has no such
// argument) reads as the zero value.
type argReader struct {
	a   args
	err error
}

func (r *argReader) need(k string) string {
	if r.err != nil {
		return ""
	}
	s, err := r.a.need(k)
	r.err = err
	return s
}

func (r *argReader) str(k string) string {
	if r.err != nil || k == "" {
		return ""
	}
	s, err := r.a.str(k)
	r.err = err
	return s
}

func (r *argReader) int(k string) int64 {
	if r.err != nil || k == "" {
		return 0
	}
	v, err := r.a.int(k)
	r.err = err
	return v
}

func (r *argReader) bool(k string) bool {
	if r.err != nil || k == "" {
		return false
	}
	v, err := r.a.bool(k)
	r.err = err
	return v
}

// scriptMapping is the Mapping of a tool that becomes one shell script:
// Shell parses the arguments and returns build's script, or the first
// argument error. After a bad argument build still runs, on zero values,
// and its script is dropped; the command builders are pure, so that costs
// only time on a call that fails anyway.
func scriptMapping(tool string, build func(r *argReader) string) Mapping {
	return Mapping{Tool: tool, Shell: func(raw json.RawMessage) (ShellCall, error) {
		a, err := parseArgs(raw)
		if err != nil {
			return ShellCall{}, err
		}
		r := argReader{a: a}
		script := build(&r)
		if r.err != nil {
			return ShellCall{}, r.err
		}
		return ShellCall{Script: script}, nil
	}}
}

// ShellSpec maps a native shell tool (opencode's and claude-code's bash).
type ShellSpec struct {
	Tool    string
	Command string // "command": a string (a script) or an array (argv)
	Workdir string // "workdir"
	Timeout string // "timeout", in TimeoutUnit
	// TimeoutUnit is the unit of Timeout; 0 is milliseconds.
	TimeoutUnit time.Duration
	// Plain marks the mapping Plain (no bridge comment; the tool plain
	// commands reverse to).
	Plain bool
}

// Mapping returns the mapping. Reverse builds {Command: CMD, Workdir: DIR};
// without a Workdir key the directory becomes a leading "cd DIR && ".
func (s ShellSpec) Mapping() Mapping {
	cmdKey, wdKey, toKey := keyOr(s.Command, "command"), get(s.Workdir, "workdir"), get(s.Timeout, "timeout")
	unit := s.TimeoutUnit
	if unit <= 0 {
		unit = time.Millisecond
	}
	return Mapping{
		Tool:  s.Tool,
		Plain: s.Plain,
		Shell: func(raw json.RawMessage) (ShellCall, error) {
			a, err := parseArgs(raw)
			if err != nil {
				return ShellCall{}, err
			}
			var sc ShellCall
			if cmd, ok := a[cmdKey]; ok && !isNull(cmd) {
				var argv []string
				if json.Unmarshal(cmd, &argv) == nil {
					if len(argv) == 0 {
						return ShellCall{}, errors.New(cmdKey + ": empty")
					}
					sc.Argv = argv
				}
			}
			if sc.Argv == nil {
				if sc.Script, err = a.need(cmdKey); err != nil {
					return ShellCall{}, err
				}
			}
			if wdKey != "" {
				if sc.Workdir, err = a.str(wdKey); err != nil {
					return ShellCall{}, err
				}
			}
			if toKey != "" {
				t, err := a.int(toKey)
				if err != nil {
					return ShellCall{}, err
				}
				if t > 0 {
					ms := float64(t) * float64(unit) / float64(time.Millisecond)
					sc.TimeoutMS = int64(min(max(ms, 1), 1<<53))
				}
			}
			return sc, nil
		},
		FromCommand: func(cmd, workdir string) string {
			var o jsonObject
			if workdir != "" && wdKey == "" {
				cmd = "cd " + Quote(workdir) + " && " + cmd
			}
			o.str(cmdKey, cmd)
			if workdir != "" && wdKey != "" {
				o.str(wdKey, workdir)
			}
			return o.String()
		},
	}
}

// ReadSpec maps a file-reading tool to ReadCommand.
type ReadSpec struct {
	Tool   string
	Path   string // "path" (required)
	Offset string // "offset": the first line to print, 1-based
	Limit  string // "limit": how many lines
	// ZeroBased says Offset counts from 0.
	ZeroBased bool
	// DefaultLimit applies when the call gives no limit (0: all lines).
	DefaultLimit int
	// FromEnd says a negative Offset counts from the end (-1: the last
	// line), as Kimi Code's Read does; without it a negative offset
	// means the first line.
	FromEnd bool
}

// Mapping returns the mapping.
func (s ReadSpec) Mapping() Mapping {
	pathKey, offKey, limKey := keyOr(s.Path, "path"), get(s.Offset, "offset"), get(s.Limit, "limit")
	return scriptMapping(s.Tool, func(r *argReader) string {
		path, off, lim := r.need(pathKey), r.int(offKey), r.int(limKey)
		if s.ZeroBased && offKey != "" {
			off++
		}
		if lim <= 0 {
			lim = int64(s.DefaultLimit)
		}
		if s.FromEnd && off < 0 {
			return ReadTailCommand(path, clampInt(-off), clampInt(lim))
		}
		return ReadCommand(path, clampInt(off), clampInt(lim))
	})
}

func clampInt(v int64) int { return int(min(max(v, -1<<31), 1<<31-1)) }

// WriteSpec maps a file-writing tool to WriteCommand.
type WriteSpec struct {
	Tool    string
	Path    string // "path" (required)
	Content string // "content" (absent means empty)
	// Mode, when set, is the key of a mode argument whose value Append
	// appends instead of replacing (Kimi Code's Write: "mode":"append");
	// any other value replaces.
	Mode, Append string
}

// Mapping returns the mapping.
func (s WriteSpec) Mapping() Mapping {
	pathKey, contentKey, modeKey := keyOr(s.Path, "path"), keyOr(s.Content, "content"), get(s.Mode, NoKey)
	return scriptMapping(s.Tool, func(r *argReader) string {
		path, content := r.need(pathKey), r.str(contentKey)
		if modeKey != "" && s.Append != "" && r.str(modeKey) == s.Append {
			return AppendCommand(path, content)
		}
		return WriteCommand(path, content)
	})
}

// EditSpec maps a string-replacement tool to EditCommand.
type EditSpec struct {
	Tool       string
	Path       string // "path" (required)
	Old        string // "old_string"
	New        string // "new_string"
	ReplaceAll string // "replace_all"
}

// Mapping returns the mapping.
func (s EditSpec) Mapping() Mapping {
	pathKey, oldKey, newKey := keyOr(s.Path, "path"), keyOr(s.Old, "old_string"), keyOr(s.New, "new_string")
	allKey := get(s.ReplaceAll, "replace_all")
	return scriptMapping(s.Tool, func(r *argReader) string {
		return EditCommand(r.need(pathKey), r.str(oldKey), r.str(newKey), r.bool(allKey))
	})
}

// GlobSpec maps a file-pattern tool to GlobCommand.
type GlobSpec struct {
	Tool    string
	Pattern string // "pattern" (required)
	Path    string // "path" (default ".")
}

// Mapping returns the mapping.
func (s GlobSpec) Mapping() Mapping {
	patKey, pathKey := keyOr(s.Pattern, "pattern"), get(s.Path, "path")
	return scriptMapping(s.Tool, func(r *argReader) string {
		return GlobCommand(r.need(patKey), r.str(pathKey))
	})
}

// GrepSpec maps a content-search tool to GrepCommand.
type GrepSpec struct {
	Tool    string
	Pattern string // "pattern" (required)
	Path    string // "path" (default ".")
	Include string // "include": a file-name glob (claude-code calls it "glob")
}

// Mapping returns the mapping.
func (s GrepSpec) Mapping() Mapping {
	patKey, pathKey, incKey := keyOr(s.Pattern, "pattern"), get(s.Path, "path"), get(s.Include, "include")
	return scriptMapping(s.Tool, func(r *argReader) string {
		return GrepCommand(r.need(patKey), r.str(pathKey), r.str(incKey))
	})
}

// EditsSpec maps a tool that makes several exact replacements in one file
// (pi's edit: {"path","edits":[{"oldText","newText"},…]}) to one
// EditCommand per replacement, run in order, each in a subshell joined by
// &&: the first that fails stops the rest, and the replacements before it
// stay made. Each replacement must match once in the file as the earlier
// ones left it (pi matches them all against the original file; the two
// agree unless a replacement's new text creates another's old text).
type EditsSpec struct {
	Tool  string
	Path  string // "path" (required)
	Edits string // "edits": an array of objects (at least one)
	Old   string // "oldText", in each edit
	New   string // "newText", in each edit
}

// Mapping returns the mapping.
func (s EditsSpec) Mapping() Mapping {
	pathKey, editsKey := keyOr(s.Path, "path"), keyOr(s.Edits, "edits")
	oldKey, newKey := keyOr(s.Old, "oldText"), keyOr(s.New, "newText")
	return scriptMapping(s.Tool, func(r *argReader) string {
		path := r.need(pathKey)
		if r.err != nil {
			return ""
		}
		var edits []args
		if err := json.Unmarshal(r.a[editsKey], &edits); err != nil || len(edits) == 0 {
			r.err = errors.New(editsKey + ": want a non-empty array of objects")
			return ""
		}
		var b strings.Builder
		for i, e := range edits {
			old, err := e.str(oldKey)
			if err == nil {
				var n string
				if n, err = e.str(newKey); err == nil {
					if i > 0 {
						b.WriteString(" && ")
					}
					b.WriteString("( " + EditCommand(path, old, n, false) + " )")
					continue
				}
			}
			r.err = fmt.Errorf("%s[%d]: %w", editsKey, i, err)
			return ""
		}
		return b.String()
	})
}

// UnavailableSpec maps a native tool that cannot run through the client
// (a subagent launcher, a scheduler, a plan-mode switch, …) to
// UnavailableCommand: the call still reaches the client as a shell call,
// which fails at once with the reason, so the model is answered with a
// clear tool error; the bridge comment keeps the native call for the
// history.
type UnavailableSpec struct {
	Tool string
	// Why says why it cannot run, in a few words ("no subagents through
	// this client").
	Why string
}

// Mapping returns the mapping; any arguments are accepted.
func (s UnavailableSpec) Mapping() Mapping {
	return Mapping{Tool: s.Tool, Shell: func(raw json.RawMessage) (ShellCall, error) {
		if _, err := parseArgs(raw); err != nil {
			return ShellCall{}, err
		}
		return ShellCall{Script: UnavailableCommand(s.Tool, s.Why)}, nil
	}}
}
