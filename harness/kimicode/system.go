package kimicode

import (
	"cmp"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/kimicli"
	"github.com/harnessflow/harnessflow/protocol"
)

// Listing limits, as Kimi Code 2.1.0 draws the working directory: entries
// of the directory and of each of its subdirectories.
const (
	ListRootWidth  = 30
	ListChildWidth = 10
)

// SystemData is what system.tmpl and fork_system.tmpl are rendered with.
type SystemData struct {
	// OS is "Linux", "macOS" or "Windows" (another OS name as it is).
	OS string
	// Shell is the shell's name ("bash").
	Shell string
	// Now is the turn's time, UTC RFC 3339 with milliseconds (the
	// variant fork's prompt holds it).
	Now string
	// WorkDir is the working directory ("." when the client did not say).
	WorkDir string
	// Listing is the tree of WorkDir (Listing), "" when it is not read.
	Listing string
	// AgentsMD is the client's AGENTS.md text, each file under a
	// "<!-- From: PATH -->" line; "" when there is none.
	AgentsMD string
	// Skills is the skills listing (skills.tmpl).
	Skills string
}

// SkillsData is what skills.tmpl is rendered with.
type SkillsData struct {
	// Scopes are the skill scopes, in order: the session's skills
	// ("User"), then Kimi Code's built-in ones ("Built-in").
	Scopes []SkillScope
}

// SkillScope is one heading of the skills listing.
type SkillScope struct {
	Name   string
	Skills []Skill
}

// Skill is one listed skill.
type Skill struct {
	Name, Description, Path string
}

// BuiltinSkills are Kimi Code's built-in skills (names and paths are its
// own; the one-line descriptions are ours).
var BuiltinSkills = []Skill{
	{"check-kimi-code-docs", "Answer questions about Kimi Code itself (usage, configuration, commands, plans and quota, API setup, error codes) from its documentation.", "builtin://check-kimi-code-docs"},
	{"update-config", "Look at or change Kimi Code's own settings in config.toml and tui.toml.", "builtin://update-config"},
	{"write-goal", "Help the user turn a rough intention into a well-specified /goal objective.", "builtin://write-goal"},
}

// SystemPrompt renders the turn's system prompt (system.tmpl, or
// fork_system.tmpl for the variant fork), trailing white space kept as the
// template has it.
func SystemPrompt(env *harness.Env, fork bool) (string, error) {
	name := "system"
	if fork {
		name = "fork_system"
	}
	d, err := systemData(env)
	if err != nil {
		return "", err
	}
	return env.Prompts.Render(harness.NameKimiCode, name, d)
}

func systemData(env *harness.Env) (SystemData, error) {
	ws := env.Workspace
	d := SystemData{OS: osName(ws.OS), Shell: ws.Shell, WorkDir: ws.Cwd,
		Now: env.Now.UTC().Format("2006-01-02T15:04:05.000Z")}
	if d.Shell == "" {
		d.Shell = "bash"
	}
	if d.WorkDir == "" {
		d.WorkDir = "."
	}
	d.Listing = Listing(env.ReadWorkDir)
	d.AgentsMD = kimicli.AgentsMD(env.ProjectDocs)
	scopes := []SkillScope{}
	if s := SessionSkills(env.Request.Input); len(s) > 0 {
		scopes = append(scopes, SkillScope{Name: "User", Skills: s})
	}
	scopes = append(scopes, SkillScope{Name: "Built-in", Skills: BuiltinSkills})
	skills, err := env.Prompts.Render(harness.NameKimiCode, "skills", SkillsData{Scopes: scopes})
	if err != nil {
		return SystemData{}, err
	}
	d.Skills = strings.TrimRight(skills, "\n")
	return d, nil
}

func osName(os string) string {
	switch strings.ToLower(os) {
	case "darwin", "macos":
		return "macOS"
	case "windows":
		return "Windows"
	case "linux", "":
		return "Linux"
	}
	return os
}

// DirReader lists a directory of the working directory ("." for itself):
// its entries and whether there were more. [harness.Env.ReadWorkDir] is
// the one the harness uses.
type DirReader func(sub string) ([]fs.DirEntry, bool, error)

type entry struct {
	name string
	dir  bool
}

// entries reads sub: directories first, then files, each by name (case
// folded first, as a locale comparison orders them, then exactly); ok is
// false when it cannot be read.
func entries(read DirReader, sub string) ([]entry, bool) {
	ents, _, err := read(sub)
	if err != nil {
		return nil, false
	}
	out := make([]entry, len(ents))
	for i, e := range ents {
		out[i] = entry{e.Name(), e.IsDir()}
	}
	slices.SortFunc(out, func(a, b entry) int {
		if a.dir != b.dir {
			if a.dir {
				return -1
			}
			return 1
		}
		return cmp.Or(strings.Compare(strings.ToLower(a.name), strings.ToLower(b.name)), strings.Compare(a.name, b.name))
	})
	return out, true
}

// Listing draws the working directory as Kimi Code 2.1.0 does: at most
// ListRootWidth entries, "├── "/"└── " before each and "/" after
// directories; each directory whose name does not start with "." with at
// most ListChildWidth of its entries indented by "│   " (4 spaces under
// the last entry); "... and N more" for what is cut off. An empty
// directory is "(empty directory)", one that cannot be read (or may not
// be, under the workspace policy none) "[not readable]".
func Listing(read DirReader) string {
	ents, ok := entries(read, ".")
	if !ok {
		return "[not readable]"
	}
	shown := ents[:min(len(ents), ListRootWidth)]
	rest := len(ents) - len(shown)
	var lines []string
	for i, e := range shown {
		last := i == len(shown)-1 && rest == 0
		conn, indent := "├── ", "│   "
		if last {
			conn, indent = "└── ", "    "
		}
		if !e.dir {
			lines = append(lines, conn+e.name)
			continue
		}
		lines = append(lines, conn+e.name+"/")
		if strings.HasPrefix(e.name, ".") {
			continue
		}
		kids, ok := entries(read, e.name)
		if !ok {
			lines = append(lines, indent+"└── [not readable]")
			continue
		}
		ks := kids[:min(len(kids), ListChildWidth)]
		krest := len(kids) - len(ks)
		for j, k := range ks {
			kconn := "├── "
			if j == len(ks)-1 && krest == 0 {
				kconn = "└── "
			}
			suffix := ""
			if k.dir {
				suffix = "/"
			}
			lines = append(lines, indent+kconn+k.name+suffix)
		}
		if krest > 0 {
			lines = append(lines, indent+"└── ... and "+strconv.Itoa(krest)+" more")
		}
	}
	if rest > 0 {
		lines = append(lines, "└── ... and "+strconv.Itoa(rest)+" more entries")
	}
	if len(lines) == 0 {
		return "(empty directory)"
	}
	return strings.Join(lines, "\n")
}

// skillLine is one entry of the engine's skills block:
// "- NAME: DESCRIPTION (file: PATH)".
var skillLine = regexp.MustCompile(`^- (\S+): (.*) \(file: ([^)]+)\)$`)

// SessionSkills are the skills of the engine's skills block (a developer
// fragment starting with <skills_instructions>), in its order, each name
// once.
func SessionSkills(items []protocol.ResponseItem) []Skill {
	var out []Skill
	seen := map[string]bool{}
	for _, it := range items {
		m, ok := it.(*protocol.Message)
		if !ok || m == nil || m.Role != protocol.RoleDeveloper {
			continue
		}
		for _, c := range m.Content {
			t := strings.TrimSpace(c.Text)
			if !strings.HasPrefix(t, "<skills_instructions>") {
				continue
			}
			for _, l := range strings.Split(t, "\n") {
				sm := skillLine.FindStringSubmatch(strings.TrimSpace(l))
				if sm == nil || seen[sm[1]] {
					continue
				}
				seen[sm[1]] = true
				out = append(out, Skill{sm[1], strings.TrimSpace(sm[2]), strings.TrimSpace(sm[3])})
			}
		}
	}
	return out
}
