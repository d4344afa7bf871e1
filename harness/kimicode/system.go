package kimicode

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/internal/kimistyle"
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
	d := SystemData{OS: kimistyle.OSName(ws.OS), Shell: ws.Shell, WorkDir: ws.Cwd,
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

// DirReader lists a directory of the working directory
// (kimistyle.DirReader).
type DirReader = kimistyle.DirReader

// listing is how Kimi Code 2.1.0 draws the working directory.
var listing = kimistyle.TreeStyle{RootWidth: ListRootWidth, ChildWidth: ListChildWidth, FoldCase: true, SkipDotDirs: true,
	Unreadable:   "[not readable]",
	MoreChildren: func(n int) string { return "... and " + strconv.Itoa(n) + " more" },
	MoreEntries:  func(n int) string { return "... and " + strconv.Itoa(n) + " more entries" }}

// Listing draws the working directory as Kimi Code 2.1.0 does: at most
// ListRootWidth entries, "├── "/"└── " before each and "/" after
// directories; each directory whose name does not start with "." with at
// most ListChildWidth of its entries indented by "│   " (4 spaces under
// the last entry); "... and N more" for what is cut off. An empty
// directory is "(empty directory)", one that cannot be read (or may not
// be, under the workspace policy none) "[not readable]".
func Listing(read DirReader) string {
	lines, err := listing.Tree(read)
	switch {
	case err != nil:
		return "[not readable]"
	case len(lines) == 0:
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
