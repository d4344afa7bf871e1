package deepseektui

import (
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/wire/chat"
)

// MaxActive is how many working-set paths the turn metadata names.
const MaxActive = 8

// workspace is what the listing of the working directory gave: every
// entry to depth 2 (relative slash paths, sorted), the README's name.
type workspace struct {
	cwd     string
	entries []wsEntry // depth 1 and 2, sorted by path
	readme  string
	listed  bool
}

type wsEntry struct {
	path string
	dir  bool
}

// skipped are the directories the context pack leaves out.
var skipped = []string{".codewhale", ".git", "target"}

// readWorkspace lists the working directory to depth 2 (under the
// workspace policy local only; nothing else is read from it).
func readWorkspace(env *harness.Env) workspace {
	ws := workspace{cwd: env.Workspace.Cwd}
	top, _, err := env.ReadWorkDir(".")
	if err != nil {
		return ws
	}
	ws.listed = true
	for _, e := range top {
		name := e.Name()
		if e.IsDir() && slices.Contains(skipped, name) {
			continue
		}
		ws.entries = append(ws.entries, wsEntry{name, e.IsDir()})
		if !e.IsDir() {
			switch name {
			case "README.md", "readme.md", "README":
				if ws.readme == "" || name == "README.md" {
					ws.readme = name
				}
			}
			continue
		}
		kids, _, err := env.ReadWorkDir(name)
		if err != nil {
			continue
		}
		for _, k := range kids {
			ws.entries = append(ws.entries, wsEntry{name + "/" + k.Name(), k.IsDir()})
		}
	}
	slices.SortFunc(ws.entries, func(a, b wsEntry) int { return strings.Compare(a.path, b.path) })
	return ws
}

// StructureData is what structure.tmpl is rendered with.
type StructureData struct {
	// Readme is the README's name, "" for none.
	Readme string
	// Tree is the listing: "DIR: name" / "FILE: name" lines, two spaces of
	// indent per level.
	Tree string
}

// EnvironmentData is what environment.tmpl is rendered with.
type EnvironmentData struct {
	Version, Platform, Shell, Pwd string
}

// SystemPrompt renders the ten sections of the system prompt (see the
// package doc), each trimmed, joined by blank lines.
func SystemPrompt(env *harness.Env, ws workspace) (string, error) {
	name := harness.NameDeepSeekTUI
	var sections []string
	add := func(text string) {
		if t := strings.TrimSpace(text); t != "" {
			sections = append(sections, t)
		}
	}
	render := func(tmpl string, data any) error {
		s, err := env.Prompts.Render(name, tmpl, data)
		if err != nil {
			return err
		}
		add(s)
		return nil
	}
	if err := render("base", map[string]string{"Model": env.Request.Model}); err != nil {
		return "", err
	}
	for _, t := range []string{"personality", "mode", "approvals"} {
		if err := render(t, nil); err != nil {
			return "", err
		}
	}
	if ws.cwd != "" {
		instr, err := projectInstructions(env, ws)
		if err != nil {
			return "", err
		}
		add(instr)
		add("## Project Context Pack\n\n<project_context_pack>\n" + contextPack(ws) + "\n</project_context_pack>")
	}
	shell := env.Workspace.Shell
	switch {
	case shell == "":
		shell = "/bin/zsh"
	case !strings.HasPrefix(shell, "/"):
		shell = "/bin/" + shell
	}
	pwd := ws.cwd
	if pwd == "" {
		pwd = "."
	}
	if err := render("environment", EnvironmentData{Version: Version, Platform: platform(env.Workspace.OS), Shell: shell, Pwd: pwd}); err != nil {
		return "", err
	}
	for _, t := range []string{"context", "compact", "recap"} {
		if err := render(t, nil); err != nil {
			return "", err
		}
	}
	return strings.Join(sections, "\n\n"), nil
}

func platform(os string) string {
	switch strings.ToLower(os) {
	case "darwin", "macos":
		return "macos"
	case "windows":
		return "windows"
	}
	return "linux"
}

// projectInstructions is the project-instructions section: the deepest
// AGENTS.md the client sent, else the generated overview — rendered only,
// never written into the workspace.
func projectInstructions(env *harness.Env, ws workspace) (string, error) {
	if n := len(env.ProjectDocs); n > 0 {
		d := env.ProjectDocs[n-1]
		return `<project_instructions source="` + d.Source() + `">` + "\n" + d.Text + "\n</project_instructions>", nil
	}
	text, err := env.Prompts.Render(harness.NameDeepSeekTUI, "structure", StructureData{Readme: ws.readme, Tree: tree(ws)})
	if err != nil {
		return "", err
	}
	src := strings.TrimSuffix(ws.cwd, "/") + "/.codewhale/instructions.md"
	return `<project_instructions source="` + src + `">` + "\n" + strings.TrimSpace(text) + "\n</project_instructions>", nil
}

// tree is the overview's listing: "DIR: x" and "FILE: y", two spaces per
// level, sorted by name.
func tree(ws workspace) string {
	var lines []string
	for _, e := range ws.entries {
		depth := strings.Count(e.path, "/")
		kind := "FILE: "
		if e.dir {
			kind = "DIR: "
		}
		lines = append(lines, strings.Repeat("  ", depth)+kind+path.Base(e.path))
	}
	return strings.Join(lines, "\n")
}

// contextPack is the context pack's JSON, indented by two spaces.
func contextPack(ws workspace) string {
	name := path.Base(strings.TrimSuffix(ws.cwd, "/"))
	if name == "" || name == "." || name == "/" {
		name = "workspace"
	}
	var dirs, keys []string
	for _, e := range ws.entries {
		dirs = append(dirs, e.path)
		if !e.dir {
			for _, ext := range []string{".py", ".rs", ".js", ".ts", ".tsx"} {
				if strings.HasSuffix(e.path, ext) {
					keys = append(keys, e.path)
					break
				}
			}
		}
	}
	list := func(xs []string) string {
		if len(xs) == 0 {
			return "[]"
		}
		var b strings.Builder
		b.WriteString("[\n")
		for i, x := range xs {
			b.WriteString("    ")
			b.Write(chat.AppendString(nil, x))
			if i < len(xs)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString("  ]")
		return b.String()
	}
	readme := "null"
	if ws.readme != "" {
		readme = `{"path": ` + string(chat.AppendString(nil, ws.readme)) + `, "excerpt": null}`
	}
	return "{\n" +
		`  "project_name": ` + string(chat.AppendString(nil, name)) + ",\n" +
		`  "directory_structure": ` + list(dirs) + ",\n" +
		`  "readme": ` + readme + ",\n" +
		`  "config_files": [],` + "\n" +
		`  "key_source_files": ` + list(keys) + ",\n" +
		`  "counts": {"config_files": 0, "directory_entries": ` + strconv.Itoa(len(dirs)) +
		`, "key_source_files": ` + strconv.Itoa(len(keys)) + "}\n}"
}

// MetaData is what turn_meta.tmpl is rendered with.
type MetaData struct {
	// Date is the client's date (else the turn's), YYYY-MM-DD.
	Date string
	// Cwd is the working directory; "" leaves the working set out.
	Cwd string
	// Readme is the README's name, "" for none.
	Readme string
	// Active are up to MaxActive "path (file|directory)" lines.
	Active []string
}

// turnMeta renders the turn-metadata block.
func turnMeta(env *harness.Env, ws workspace) (string, error) {
	d := MetaData{Date: turnDate(env), Cwd: ws.cwd, Readme: ws.readme, Active: activePaths(ws, "directory")}
	s, err := env.Prompts.Render(harness.NameDeepSeekTUI, "turn_meta", d)
	if err != nil {
		return "", err
	}
	return strings.TrimRight(s, "\n"), nil
}

// activePaths are the first MaxActive top-level entries other than
// README.md, each with its kind ("file", or dirWord for a directory).
func activePaths(ws workspace, dirWord string) []string {
	var out []string
	for _, e := range ws.entries {
		if strings.Contains(e.path, "/") || e.path == "README.md" {
			continue
		}
		kind := "file"
		if e.dir {
			kind = dirWord
		}
		out = append(out, e.path+" ("+kind+")")
		if len(out) == MaxActive {
			break
		}
	}
	return out
}

// turnDate is the client's date, else the turn's.
func turnDate(env *harness.Env) string {
	if d, err := time.Parse(time.DateOnly, env.Workspace.Date); err == nil {
		return d.Format(time.DateOnly)
	}
	return env.Now.Format(time.DateOnly)
}
