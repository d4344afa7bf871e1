package scripted_test

import (
	"net/http"
	"testing"

	"github.com/harnessflow/harnessflow/scripted"
)

// FuzzChatRequest: any chat request body, with the text-protocol readings
// and the text tool formats on, gets an answer (200 or an error status)
// without a panic.
func FuzzChatRequest(f *testing.F) {
	f.Add(chatRequest(true, nil, msg("user", "<pr_description>hi</pr_description>")))
	f.Add(chatRequest(false, nil, msg("user", "You are an AI assistant tasked <keystrokes"), msg("assistant", "x"), msg("user", "New Terminal Output:\nok")))
	f.Add(chatRequest(true, nil, msg("system", "<tools>\n{\"name\":\"shell\",\"parameters\":{}}\n<function>\n<name>exec_command</name><parameter><name>cmd</name><type>string</type></parameter></function>\n</tools>"), msg("user", "<tool_response>x")))
	f.Add(chatRequest(false, []string{tool("apply_patch", `{}`)}, msg("user", "apply a patch to file a.txt")))
	handlers := []http.Handler{}
	for _, o := range []scripted.Options{{TextToolFormat: scripted.TextToolsHermes}, {TextToolFormat: scripted.TextToolsQwen3Coder, RejectTools: true}, {}} {
		h, err := scripted.NewWithOptions(nil, o)
		if err != nil {
			f.Fatal(err)
		}
		handlers = append(handlers, h)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, h := range handlers {
			w := serve(t, h, http.MethodPost, "/v1/chat/completions", body)
			if w.Code != http.StatusOK && (w.Code < 400 || w.Code > 599) {
				t.Errorf("status %d for %q", w.Code, body)
			}
		}
	})
}
