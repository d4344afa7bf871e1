package request

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/protocol"
)

// searchCallArguments is the arguments text of a tool_search_call in the
// history, as the model wrote them when it called the emulated tool_search
// function (docs/request-shaping.md#tool-search): the arguments object
// compacted, the text of a JSON string, "{}" when there are none.
func searchCallArguments(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "{}", nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("invalid JSON: %w", err)
		}
		return s, nil
	}
	b, err := appendRaw(nil, raw)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// searchOutputText is the tool message of a tool_search_output: what the
// search found, by the names the model calls the tools under (name gives
// the wire name of a namespaced function), in our own words.
func searchOutputText(o *protocol.ToolSearchOutput, name func(namespace, name string) string) (string, error) {
	var names []string
	for j, raw := range o.Tools {
		var t struct {
			Type  string `json:"type"`
			Name  string `json:"name"`
			Tools []struct {
				Type string `json:"type"`
				Name string `json:"name"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return "", fmt.Errorf("tool_search_output tools[%d]: %w", j, err)
		}
		switch t.Type {
		case protocol.ToolTypeNamespace:
			for _, in := range t.Tools {
				switch in.Type {
				case protocol.ToolTypeFunction:
					names = append(names, name(t.Name, in.Name))
				case protocol.ToolTypeCustom:
					names = append(names, in.Name)
				}
			}
		case protocol.ToolTypeFunction, protocol.ToolTypeCustom:
			names = append(names, t.Name)
		}
	}
	if len(names) == 0 {
		return "The search found no tools.", nil
	}
	return fmt.Sprintf("The search loaded %d tool(s), now available to call: %s.", len(names), strings.Join(names, ", ")), nil
}
