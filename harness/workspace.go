package harness

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/protocol"
)

// WorkspacePolicy says whether a harness may read the client's working
// directory from the disk of the machine harnessflow runs on
// (docs/request-shaping.md#workspace).
type WorkspacePolicy string

// The workspace policies.
const (
	// WorkspaceLocal: the client runs on this machine; a harness may list
	// the working directory the request names — that directory only, no
	// symbolic link leading out of it, a bounded number of entries.
	WorkspaceLocal WorkspacePolicy = "local"
	// WorkspaceNone: nothing is read from this machine's disk; a harness
	// shows what the request itself says.
	WorkspaceNone WorkspacePolicy = "none"
)

// ParseWorkspacePolicy parses "local" or "none".
func ParseWorkspacePolicy(s string) (WorkspacePolicy, error) {
	switch p := WorkspacePolicy(s); p {
	case WorkspaceLocal, WorkspaceNone:
		return p, nil
	}
	return "", fmt.Errorf("unknown workspace policy %q: want local or none", s)
}

// DefaultWorkspacePolicy is the policy of a proxy that listens on listen
// and requires client keys or not: local only on a loopback address
// without client keys (the client is on this machine), none otherwise.
func DefaultWorkspacePolicy(listen string, clientKeys bool) WorkspacePolicy {
	if clientKeys || !loopback(listen) {
		return WorkspaceNone
	}
	return WorkspaceLocal
}

// loopback reports whether a listen address names only loopback
// interfaces ("127.0.0.1:8080", "[::1]:0", "localhost:9000").
func loopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		host = listen
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (p WorkspacePolicy) orLocal() WorkspacePolicy {
	if p == "" {
		return WorkspaceLocal
	}
	return p
}

// MaxDirEntries bounds how many entries of one directory a harness reads.
const MaxDirEntries = 1000

// ErrNoWorkspace is returned by [Env.ReadWorkDir] when the turn may not
// read the working directory (policy none, or no absolute cwd).
var ErrNoWorkspace = errors.New("the working directory is not read from this machine")

// ReadWorkDir lists the directory sub (slash-separated, "." for the
// working directory itself) of the client's working directory from this
// machine's disk: at most MaxDirEntries entries, in directory order, and
// whether there were more. Only the policy local reads anything; the path
// is confined to the working directory — ".." and symbolic links that lead
// out of it are refused (os.Root).
func (e *Env) ReadWorkDir(sub string) ([]fs.DirEntry, bool, error) {
	if e.Files.orLocal() != WorkspaceLocal {
		return nil, false, ErrNoWorkspace
	}
	cwd := e.Workspace.Cwd
	if !filepath.IsAbs(cwd) {
		return nil, false, ErrNoWorkspace
	}
	cwd = filepath.Clean(cwd)
	root, err := os.OpenRoot(cwd)
	if err != nil {
		return nil, false, fmt.Errorf("workspace %s: %w", cwd, err)
	}
	defer root.Close()
	f, err := root.Open(sub)
	if err != nil {
		return nil, false, fmt.Errorf("workspace %s: %w", cwd, err)
	}
	defer f.Close()
	ents, err := f.ReadDir(MaxDirEntries + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, fmt.Errorf("workspace %s: list %s: %w", cwd, sub, err)
	}
	more := len(ents) > MaxDirEntries
	return ents[:min(len(ents), MaxDirEntries)], more, nil
}

// turnTime is the time a harness shows the model: a function of the
// request, so that the same request shapes to the same bytes and every
// turn of a conversation has the same prompt (docs/request-shaping.md#time):
//
//   - the client's current_date, at the start of the conversation when
//     the conversation key is a UUIDv7 of that day (Codex's session ids
//     are), else at midnight — in the client's time zone when it is known
//     here, else UTC;
//   - without a date, the time of a UUIDv7 conversation key;
//   - else the clock's day at midnight UTC.
func turnTime(ws Workspace, key string, clock time.Time) time.Time {
	loc := time.UTC
	if ws.Timezone != "" {
		if l, err := time.LoadLocation(ws.Timezone); err == nil {
			loc = l
		}
	}
	started, haveStart := uuidV7Time(key)
	if d, err := time.ParseInLocation(time.DateOnly, ws.Date, loc); err == nil {
		if haveStart && started.In(loc).Format(time.DateOnly) == ws.Date {
			return started.In(loc)
		}
		return d
	}
	if haveStart {
		return started.In(loc)
	}
	y, m, d := clock.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// uuidV7Time is the millisecond time stamp of a UUID of version 7.
func uuidV7Time(s string) (time.Time, bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' || s[14] != '7' {
		return time.Time{}, false
	}
	hex := s[:8] + s[9:13]
	var ms int64
	for _, c := range hex {
		var v int64
		switch {
		case c >= '0' && c <= '9':
			v = int64(c - '0')
		case c >= 'a' && c <= 'f':
			v = int64(c-'a') + 10
		case c >= 'A' && c <= 'F':
			v = int64(c-'A') + 10
		default:
			return time.Time{}, false
		}
		ms = ms<<4 | v
	}
	return time.UnixMilli(ms).UTC(), true
}

// ErrNoClientShell is wrapped by the error of a turn whose harness bridges
// its own tools onto the client's shell tool when the request offers tools
// but no shell.
var ErrNoClientShell = errors.New("the request offers no shell tool to bridge onto")

// checkShell refuses a turn of a bridging harness (Spec.Bridge) whose
// request offers tools, none of which is a shell: its own tools would have
// nothing to run on, and sending the request without them would hide that.
func checkShell(spec Spec, env *Env) error {
	if spec.Bridge == nil || env.Client.Kind != bridge.ShellNone || len(env.Request.Tools) == 0 {
		return nil
	}
	codeMode := false
	for _, t := range env.Request.Tools {
		if t.Type != protocol.ToolTypeNamespace {
			continue
		}
		for _, in := range t.Tools {
			if in.Type == protocol.ToolTypeCustom && in.Name == "exec" {
				codeMode = true
			}
		}
	}
	hint := ""
	if codeMode {
		hint = " (the tools are a code-mode surface — a JavaScript exec tool — as Codex's default model gets;" +
			" name a model in Codex's config so that it sends exec_command)"
	}
	return fmt.Errorf("harness %s: %w: it runs its own tools through the client's exec_command, shell or local_shell tool,"+
		" and none of the request's %d tools is one%s; the harnesses native and minimal send the client's tools as they are",
		spec.Name, ErrNoClientShell, len(env.Request.Tools), hint)
}
