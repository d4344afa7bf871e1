package kimistyle

import (
	"cmp"
	"io/fs"
	"slices"
	"strings"
)

// DirReader lists a directory of the working directory ("." for itself,
// slash-separated below it): its entries and whether there were more than
// it returns. [harness.Env.ReadWorkDir] is the one the harnesses use.
type DirReader func(sub string) ([]fs.DirEntry, bool, error)

// TreeStyle is how one of the kimi agents draws the working directory in
// its system prompt; kimi-cli and kimi-code differ only in these.
type TreeStyle struct {
	// RootWidth and ChildWidth bound the entries shown of the directory
	// and of each subdirectory.
	RootWidth, ChildWidth int
	// FoldCase orders names case-folded first, then exactly (as a locale
	// comparison does); otherwise bytewise. Directories come first either way.
	FoldCase bool
	// SkipDotDirs leaves directories whose name starts with "." unexpanded.
	SkipDotDirs bool
	// Unreadable is the child line of a subdirectory that cannot be read
	// ("": none).
	Unreadable string
	// MoreChildren and MoreEntries are the last line's text when a
	// subdirectory or the directory has n entries more than shown.
	MoreChildren, MoreEntries func(n int) string
}

type treeEntry struct {
	name string
	dir  bool
}

// entries reads sub in the style's order. A symbolic link is listed as a
// file and never followed.
func (st TreeStyle) entries(read DirReader, sub string) ([]treeEntry, error) {
	ents, _, err := read(sub)
	if err != nil {
		return nil, err
	}
	out := make([]treeEntry, len(ents))
	for i, e := range ents {
		out[i] = treeEntry{e.Name(), e.IsDir()}
	}
	slices.SortFunc(out, func(a, b treeEntry) int {
		if a.dir != b.dir {
			if a.dir {
				return -1
			}
			return 1
		}
		if st.FoldCase {
			if c := strings.Compare(strings.ToLower(a.name), strings.ToLower(b.name)); c != 0 {
				return c
			}
		}
		return cmp.Compare(a.name, b.name)
	})
	return out, nil
}

// Tree draws the working directory read by read: "├── "/"└── " before each
// entry and "/" after directories, each expanded directory's entries
// indented by "│   " (4 spaces under the last entry), and a last line for
// what the widths cut off. It returns the lines (none for an empty
// directory), or the error of reading the directory itself.
func (st TreeStyle) Tree(read DirReader) ([]string, error) {
	ents, err := st.entries(read, ".")
	if err != nil {
		return nil, err
	}
	shown := ents[:min(len(ents), st.RootWidth)]
	rest := len(ents) - len(shown)
	var lines []string
	for i, e := range shown {
		conn, indent := "├── ", "│   "
		if i == len(shown)-1 && rest == 0 {
			conn, indent = "└── ", "    "
		}
		if !e.dir {
			lines = append(lines, conn+e.name)
			continue
		}
		lines = append(lines, conn+e.name+"/")
		if st.SkipDotDirs && strings.HasPrefix(e.name, ".") {
			continue
		}
		kids, err := st.entries(read, e.name)
		if err != nil {
			if st.Unreadable != "" {
				lines = append(lines, indent+"└── "+st.Unreadable)
			}
			continue
		}
		ks := kids[:min(len(kids), st.ChildWidth)]
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
			lines = append(lines, indent+"└── "+st.MoreChildren(krest))
		}
	}
	if rest > 0 {
		lines = append(lines, "└── "+st.MoreEntries(rest))
	}
	return lines, nil
}

// OSName is the operating system's name as the kimi agents write it.
func OSName(os string) string {
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
