package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
)

// piBody is the part of a pi-family body the checks read.
type piBody struct {
	chatBody
	MaxCompletionTokens int             `json:"max_completion_tokens"`
	Store               *bool           `json:"store"`
	Thinking            json.RawMessage `json:"thinking"`
}

func decodePi(body []byte) (piBody, error) {
	var b piBody
	err := json.Unmarshal(body, &b)
	return b, err
}

// checkPiBodies: pi 0.73.1's body (its prompt, four tools, store false,
// max_completion_tokens 16384, no thinking field), then the follow-up in
// which the model's bash call is shown again as bash, its output unwrapped.
func checkPiBodies(bodies [][]byte) error {
	if len(bodies) < 2 {
		return fmt.Errorf("%d requests, want 2", len(bodies))
	}
	b, err := decodePi(bodies[0])
	if err != nil {
		return err
	}
	if len(b.Messages) < 2 || b.Messages[0].Role != "system" || !bytes.Contains(b.Messages[0].Content, []byte("inside pi")) {
		return errors.New("the first message is not pi's system prompt")
	}
	if names := b.toolNames(); !slices.Equal(names, []string{"read", "bash", "edit", "write"}) {
		return fmt.Errorf("tools %v, want pi's four", names)
	}
	if b.MaxCompletionTokens != 16384 || b.Store == nil || *b.Store || b.Thinking != nil {
		return fmt.Errorf("max_completion_tokens %d, store %v, thinking %s; want 16384, false, none", b.MaxCompletionTokens, b.Store, b.Thinking)
	}
	return checkBashReplay(bodies[1], "pi route ok")
}

// checkBashReplay: the follow-up shows the call as bash and the tool
// message holds the command's output, out of Codex's framing.
func checkBashReplay(body []byte, output string) error {
	b, err := decodePi(body)
	if err != nil {
		return err
	}
	var call, tool bool
	for _, m := range b.Messages {
		for _, c := range m.ToolCalls {
			call = call || c.Function.Name == "bash"
		}
		var text string
		if m.Role == "tool" && json.Unmarshal(m.Content, &text) == nil {
			if strings.Contains(text, "Chunk ID") || strings.Contains(text, "Output:") {
				return fmt.Errorf("the tool message keeps Codex's framing: %q", text)
			}
			tool = tool || strings.Contains(text, output)
		}
	}
	if !call || !tool {
		return fmt.Errorf("the follow-up does not replay the bash call (%t) and its output (%t)", call, tool)
	}
	return nil
}

// checkLittleCoderBodies: little-coder's body (its prompt with a guidance
// block, twenty tools, temperature 0.3, thinking), then the replay.
func checkLittleCoderBodies(bodies [][]byte) error {
	if len(bodies) < 2 {
		return fmt.Errorf("%d requests, want 2", len(bodies))
	}
	b, err := decodePi(bodies[0])
	if err != nil {
		return err
	}
	if len(b.Messages) < 2 || b.Messages[0].Role != "system" || !bytes.Contains(b.Messages[0].Content, []byte("# little-coder")) ||
		!bytes.Contains(b.Messages[0].Content, []byte("## Tool Usage Guidance")) {
		return errors.New("the first message is not little-coder's system prompt with a guidance block")
	}
	if names := b.toolNames(); len(names) != 20 || names[0] != "read" || names[17] != "ShellSession" {
		return fmt.Errorf("tools %v, want little-coder's twenty", names)
	}
	if string(b.Temperature) != "0.3" || string(b.Thinking) != `{"type":"enabled"}` || b.MaxCompletionTokens != 32000 {
		return fmt.Errorf("temperature %s, thinking %s, max_completion_tokens %d", b.Temperature, b.Thinking, b.MaxCompletionTokens)
	}
	return checkBashReplay(bodies[1], "little-coder route ok")
}

// autoKimiRoute is the route auto picks for a Kimi-named model: kimi-code
// where this build has it, else native.
func autoKimiRoute() string {
	if _, ok := harness.Lookup(harness.NameKimiCode); ok {
		return "ChatHarness(KimiCode)"
	}
	return "ChatCompletionsCompat"
}

// checkAutoQwenBody: a Qwen-named model through /h/auto/ gets qwen-code's
// request.
func checkAutoQwenBody(body []byte) error { return checkQwenCodeBody(body) }
