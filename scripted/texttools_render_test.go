package scripted

import (
	"testing"

	"github.com/harnessflow/harnessflow/stages/textcall"
)

// TestTextToolFormatsRender: every text format of the scripted model but
// qwen3_thinking (hermes calls) is a textcall format with a render half,
// and its calls read back with that format's parser.
func TestTextToolFormatsRender(t *testing.T) {
	calls := []call{{name: "exec_command", args: `{"cmd":"printf 'ü\n'","n":2}`}}
	for _, format := range TextToolFormats {
		name := format
		if format == TextToolsQwen3Thinking {
			name = TextToolsHermes
		}
		text := toolCallText(format, calls)
		rep, err := textcall.ParseReply(textcall.ReaderOptions{Format: name, Config: textcall.Config{
			Schemas: textcall.Schemas{"exec_command": {"cmd": "string", "n": "integer"}}}}, text)
		if err != nil || len(rep.Calls) != 1 || rep.Calls[0].Name != "exec_command" {
			t.Errorf("%s: %q read back as %+v (%v)", format, text, rep, err)
		}
	}
}
