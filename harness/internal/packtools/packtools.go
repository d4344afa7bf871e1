// Package packtools reads a harness's fixed chat tool list from a data
// file of the prompt pack: {"tools":[{"name","description","parameters"}…]}
// (names and parameter schemas are the agent's own, descriptions ours). The
// kimi-code and deepseek-tui harnesses keep their tools this way.
package packtools

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/stages/request"
)

// Def is one tool of a tools file.
type Def struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Load reads the data file of harness called file and returns its tools,
// in the file's order. Every tool needs a name, a description and an
// object schema; no name may repeat; unknown keys are errors.
func Load(p *prompts.Pack, harness, file string) ([]request.Tool, error) {
	data, err := p.Data(harness, file)
	if err != nil {
		return nil, err
	}
	var f struct {
		Tools []Def `json:"tools"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s/%s: %w", harness, file, err)
	}
	seen := map[string]bool{}
	out := make([]request.Tool, 0, len(f.Tools))
	for i, t := range f.Tools {
		var schema struct {
			Type string `json:"type"`
		}
		switch {
		case t.Name == "":
			return nil, fmt.Errorf("%s/%s: tool %d has no name", harness, file, i)
		case seen[t.Name]:
			return nil, fmt.Errorf("%s/%s: tool %q is defined twice", harness, file, t.Name)
		case t.Description == "":
			return nil, fmt.Errorf("%s/%s: tool %q has no description", harness, file, t.Name)
		case json.Unmarshal(t.Parameters, &schema) != nil || schema.Type != "object":
			return nil, fmt.Errorf("%s/%s: tool %q: parameters is not an object schema", harness, file, t.Name)
		}
		seen[t.Name] = true
		var compact bytes.Buffer
		_ = json.Compact(&compact, t.Parameters) // valid: it unmarshalled above
		out = append(out, request.Tool{Name: t.Name, Description: t.Description, Parameters: json.RawMessage(compact.Bytes())})
	}
	return out, nil
}
