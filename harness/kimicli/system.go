package kimicli

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/internal/kimistyle"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

// Listing limits: entries shown of the working directory and of each of
// its subdirectories.
const (
	ListRootWidth  = 30
	ListChildWidth = 10
)

// AgentsMDBudget caps the AGENTS.md text of the system prompt, in bytes.
const AgentsMDBudget = 32 * 1024

// nowLayout is RFC 3339 with microseconds and a numeric zone.
const nowLayout = "2006-01-02T15:04:05.000000-07:00"

// SystemData is what system.tmpl is rendered with.
type SystemData struct {
	// OS is "Linux", "macOS" or "Windows" (another OS name as it is).
	OS string
	// Shell names the shell and its path, e.g. "bash (`/bin/bash`)".
	Shell string
	// Now is the turn's time, RFC 3339 with microseconds.
	Now string
	// WorkDir is the working directory ("." when the client did not say).
	WorkDir string
	// WorkDirListing is the tree listing of WorkDir, "" when it could not
	// be read.
	WorkDirListing string
	// AgentsMD is the collected AGENTS.md text, "" when there is none.
	AgentsMD string
	// Skills lists the session's skills, "" when there are none.
	Skills string
}

// DeveloperData is what developer.tmpl is rendered with.
type DeveloperData struct {
	// Text is the section's body: the guidance and the developer texts.
	Text string
}

// SystemPrompt renders the kimi-cli system prompt of a turn (see the
// package doc).
func SystemPrompt(env *harness.Env) (string, error) {
	name := harness.NameKimiCLI
	req := env.Request
	if len(req.Tools) == 0 && req.Instructions != "" && env.Prompts.Has(name, "compaction") {
		c, err := env.Prompts.Render(name, "compaction", nil)
		if err != nil {
			return "", err
		}
		if strings.TrimRight(req.Instructions, "\n") == strings.TrimRight(c, "\n") {
			return req.Instructions, nil
		}
	}
	data := systemData(env)
	text, err := env.Prompts.Render(name, "system", data)
	if err != nil {
		return "", err
	}
	text = strings.TrimRight(text, "\n")
	var section []string
	guidance, err := env.Prompts.Render(name, "guidance", nil)
	if err != nil {
		return "", err
	}
	if g := strings.TrimSpace(guidance); g != "" {
		section = append(section, g)
	}
	section = append(section, DeveloperTexts(req.Input)...)
	if len(section) == 0 {
		return text, nil
	}
	dev, err := env.Prompts.Render(name, "developer", DeveloperData{Text: strings.Join(section, "\n\n")})
	if err != nil {
		return "", err
	}
	return text + "\n\n" + strings.TrimRight(dev, "\n"), nil
}

// systemData gathers the values of system.tmpl from the env.
func systemData(env *harness.Env) SystemData {
	ws := env.Workspace
	d := SystemData{OS: kimistyle.OSName(ws.OS), Now: env.Now.Format(nowLayout), WorkDir: ws.Cwd}
	shell := ws.Shell
	if shell == "" {
		shell = "bash"
	}
	d.Shell = shell + " (`/bin/" + shell + "`)"
	if d.OS == "Windows" {
		d.Shell = "powershell (`powershell.exe`)"
	}
	if d.WorkDir == "" {
		d.WorkDir = "."
	}
	if l, err := ListDirectory(env.ReadWorkDir); err == nil {
		d.WorkDirListing = l
	} else if env.Logger != nil {
		env.Logger.Debug("kimi-cli: working directory not listed", "cwd", ws.Cwd, "error", err)
	}
	d.AgentsMD = AgentsMD(env.ProjectDocs)
	d.Skills = Skills(env.Request.Input)
	return d
}

// DeveloperTexts returns the text of every developer item of the history
// that is not a contextual developer fragment, trimmed, blank ones left out.
func DeveloperTexts(items []protocol.ResponseItem) []string {
	var out []string
	for _, it := range items {
		m, ok := it.(*protocol.Message)
		if !ok || m == nil || m.Role != protocol.RoleDeveloper {
			continue
		}
		for _, c := range m.Content {
			switch {
			case c.Type == protocol.ContentInputText && request.IsContextualDeveloperText(c.Text):
			case c.Type == protocol.ContentInputText, c.Type == protocol.ContentOutputText:
				if t := strings.TrimSpace(c.Text); t != "" {
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// DirReader lists a directory of the working directory
// (kimistyle.DirReader).
type DirReader = kimistyle.DirReader

// listing is how kimi-cli draws the working directory.
var listing = kimistyle.TreeStyle{RootWidth: ListRootWidth, ChildWidth: ListChildWidth,
	MoreChildren: func(n int) string { return "(" + strconv.Itoa(n) + " more)" },
	MoreEntries:  func(n int) string { return "(" + strconv.Itoa(n) + " more entries)" }}

// ListDirectory draws the tree listing of the working directory read by
// read: at most ListRootWidth entries, each directory with at most
// ListChildWidth of its own entries (directories marked with "/"),
// directories first, then by name; entries beyond the limits are counted
// on a last line. A directory that cannot be read is an error; an
// unreadable subdirectory shows no children. A symbolic link is listed as
// a file and never followed.
func ListDirectory(read DirReader) (string, error) {
	lines, err := listing.Tree(read)
	switch {
	case err != nil:
		return "", fmt.Errorf("kimi-cli: list the working directory: %w", err)
	case len(lines) == 0:
		return "(the directory is empty)", nil
	}
	return strings.Join(lines, "\n"), nil
}

// AgentsMD is the project-instructions text of the system prompt: each
// project doc of the request (what the client read from its AGENTS.md
// files) under a "<!-- From: DIR/AGENTS.md -->" line, joined by blank
// lines, within AgentsMDBudget bytes in all (the last docs, the deepest,
// are kept first when the budget runs out); "" when there are none.
func AgentsMD(docs []harness.ProjectDoc) string {
	remaining := AgentsMDBudget
	kept := make([]string, len(docs))
	for i := len(docs) - 1; i >= 0; i-- {
		head := "<!-- From: " + docs[i].Source() + " -->\n"
		cost := len(head)
		if i < len(docs)-1 {
			cost += 2
		}
		remaining = max(remaining-cost, 0)
		if remaining == 0 {
			continue
		}
		text := docs[i].Text
		if len(text) > remaining {
			text = strings.TrimSpace(cutUTF8(text, remaining))
		}
		remaining = max(remaining-len(text), 0)
		if text != "" {
			kept[i] = head + text
		}
	}
	var out []string
	for _, k := range kept {
		if k != "" {
			out = append(out, k)
		}
	}
	return strings.Join(out, "\n\n")
}

// cutUTF8 cuts s to at most n bytes without splitting a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// skillLine is one entry of the engine's skills block:
// "- NAME: DESCRIPTION (file: PATH)".
var skillLine = regexp.MustCompile(`^- ([^:]+): (.*) \(file: ([^)]+)\)$`)

// Skills lists the skills of the session's skills block (a developer
// fragment starting with <skills_instructions>) in the kimi layout:
// "### Extra" and per skill "- NAME", "  - Path: PATH",
// "  - Description: DESCRIPTION", sorted by name; "" when there are none.
func Skills(items []protocol.ResponseItem) string {
	type skill struct{ name, desc, path string }
	var skills []skill
	seen := map[string]bool{}
	for _, it := range items {
		m, ok := it.(*protocol.Message)
		if !ok || m == nil || m.Role != protocol.RoleDeveloper {
			continue
		}
		for _, c := range m.Content {
			t := strings.TrimSpace(c.Text)
			if !strings.HasPrefix(strings.ToLower(t), "<skills_instructions>") {
				continue
			}
			for _, l := range strings.Split(t, "\n") {
				sm := skillLine.FindStringSubmatch(strings.TrimSpace(l))
				if sm == nil || seen[strings.ToLower(sm[1])] {
					continue
				}
				seen[strings.ToLower(sm[1])] = true
				skills = append(skills, skill{strings.TrimSpace(sm[1]), strings.TrimSpace(sm[2]), strings.TrimSpace(sm[3])})
			}
		}
	}
	if len(skills) == 0 {
		return ""
	}
	sort.Slice(skills, func(i, j int) bool { return skills[i].name < skills[j].name })
	var b strings.Builder
	b.WriteString("### Extra")
	for _, s := range skills {
		b.WriteString("\n- " + s.name + "\n  - Path: " + s.path + "\n  - Description: " + s.desc)
	}
	return b.String()
}
