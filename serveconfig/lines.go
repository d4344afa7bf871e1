package serveconfig

import (
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// lineIndex maps the key paths of a TOML document to the line each is
// written on, so that a validation error can say where the value it is
// about was written. Paths join their parts with pathSep; an element of an
// array of tables is named by its index ("models", "2", "name").
type lineIndex struct {
	lines map[string]int
	// arrayEntries lists, per array-of-tables path, the header line of
	// each element in order.
	arrayEntries map[string][]int
}

// pathSep joins the parts of a path: a byte no TOML key we read contains.
const pathSep = "\x1f"

// indexLines indexes doc. A document the parser refuses gives a partial
// index (the decoder has reported the syntax error by then).
func indexLines(doc []byte) lineIndex {
	ix := lineIndex{lines: map[string]int{}, arrayEntries: map[string][]int{}}
	var p unstable.Parser
	p.Reset(doc)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			key, line := keyParts(&p, e)
			table = key
			if e.Kind == unstable.ArrayTable {
				path := strings.Join(key, pathSep)
				ix.arrayEntries[path] = append(ix.arrayEntries[path], line)
				table = append(key, strconv.Itoa(len(ix.arrayEntries[path])-1))
			}
			ix.set(table, line)
		case unstable.KeyValue:
			ix.keyValue(&p, table, e)
		}
	}
	return ix
}

// keyValue records a key/value expression under prefix, and the keys of
// an inline table it holds.
func (ix lineIndex) keyValue(p *unstable.Parser, prefix []string, e *unstable.Node) {
	key, line := keyParts(p, e)
	path := append(append([]string(nil), prefix...), key...)
	for n := len(prefix) + 1; n <= len(path); n++ {
		ix.set(path[:n], line) // a dotted key defines its tables where it is written
	}
	if v := e.Value(); v.Kind == unstable.InlineTable {
		it := v.Children()
		for it.Next() {
			if kv := it.Node(); kv.Kind == unstable.KeyValue {
				ix.keyValue(p, path, kv)
			}
		}
	}
}

func (ix lineIndex) set(path []string, line int) {
	k := strings.Join(path, pathSep)
	if _, ok := ix.lines[k]; !ok {
		ix.lines[k] = line
	}
}

// keyParts returns the parts of a table header's or key/value's key and
// the line it starts on.
func keyParts(p *unstable.Parser, e *unstable.Node) ([]string, int) {
	var parts []string
	line := 0
	it := e.Key()
	for it.Next() {
		k := it.Node()
		if line == 0 {
			line = p.Shape(k.Raw).Start.Line
		}
		parts = append(parts, string(k.Data))
	}
	return parts, line
}

// line returns the line of path, or of its nearest ancestor that was
// written; 0 when none was.
func (ix lineIndex) line(path ...string) int {
	for n := len(path); n > 0; n-- {
		if l, ok := ix.lines[strings.Join(path[:n], pathSep)]; ok {
			return l
		}
	}
	return 0
}

// arrayEntry returns the index of the element of the array of tables
// named path that a line belongs to (the last header at or before it), or
// -1.
func (ix lineIndex) arrayEntry(path string, line int) int {
	entry := -1
	for i, l := range ix.arrayEntries[path] {
		if l <= line {
			entry = i
		}
	}
	return entry
}

// tableOf returns the table of the key k written on line, as far as the
// index knows (nil: the top level).
func (ix lineIndex) tableOf(k string, line int) []string {
	for path, l := range ix.lines {
		parts := strings.Split(path, pathSep)
		if l == line && len(parts) > 1 && parts[len(parts)-1] == k {
			return parts[:len(parts)-1]
		}
	}
	return nil
}
