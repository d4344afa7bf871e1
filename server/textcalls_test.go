package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/server"
)

// textCallUpstream answers every chat request with content that carries
// a Qwen3-Coder call as text, cut inside its markers, and no tool_calls.
func textCallUpstream(t *testing.T) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		text := "Listing.\n<tool_call>\n<function=exec_command>\n<parameter=cmd>\nls -l\n</parameter>\n</function>\n</tool_call>"
		for len(text) > 0 {
			n := min(5, len(text))
			c, _ := json.Marshal(text[:n])
			fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-t\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%s}}]}\n\n", c)
			text = text[n:]
		}
		io.WriteString(w, "data: {\"id\":\"chatcmpl-t\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	})
}

// serve recovers a call a chat server left in the text by default (auto),
// counts it, and leaves it as text with --tool-format off.
func TestTextToolCalls(t *testing.T) {
	for _, c := range []struct {
		format string
		call   bool
	}{{"", true}, {"auto", true}, {"qwen3_coder", true}, {"hermes", true}, {"off", false}} {
		t.Run("format="+c.format, func(t *testing.T) {
			p := newProxy(t, newUpstream(t, textCallUpstream(t)), server.Config{ToolFormat: c.format})
			evs := readSSE(t, p.post(t, "/v1/responses", codexRequest(userMsg, true), nil).Body)
			items := doneItems(evs)
			var calls []map[string]any
			var text string
			for _, it := range items {
				switch it["type"] {
				case "function_call":
					calls = append(calls, it)
				case "message":
					b, _ := json.Marshal(it["content"])
					text += string(b)
				}
			}
			if terminal(t, evs).Name != "response.completed" {
				t.Fatalf("events %v", names(evs))
			}
			m := metricsText(t, p)
			if !c.call {
				if len(calls) != 0 || !strings.Contains(text, "function=exec_command") {
					t.Errorf("off: calls %v, text %s", calls, text)
				}
				if strings.Contains(m, "harnessflow_text_tool_calls_total{") {
					t.Errorf("off: metrics count text calls:\n%s", m)
				}
				return
			}
			if len(calls) != 1 || calls[0]["name"] != "exec_command" || calls[0]["arguments"] != `{"cmd":"ls -l"}` || calls[0]["call_id"] != "call_chatcmpl-t_0" {
				t.Fatalf("calls %v (items %v)", calls, items)
			}
			if strings.Contains(text, "tool_call") || !strings.Contains(text, "Listing.") {
				t.Errorf("message text %s", text)
			}
			label := c.format // the format that read it: auto's choice, or the one given
			if label == "" || label == "auto" {
				label = "qwen3_coder"
			}
			if want := `harnessflow_text_tool_calls_total{format="` + label + `",outcome="recovered"} 1`; !strings.Contains(m, want) {
				t.Errorf("metrics lack %q:\n%s", want, m)
			}
		})
	}
}

func TestToolFormatChecked(t *testing.T) {
	err := server.Config{Upstream: "http://127.0.0.1:1/v1", ToolFormat: "qwen3-coder"}.Check()
	if err == nil || !strings.Contains(err.Error(), `unknown tool format "qwen3-coder"`) {
		t.Fatalf("Check() = %v", err)
	}
}
