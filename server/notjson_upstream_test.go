package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/server"
)

// htmlPage is what a gateway in front of the model server answers when it
// fails: an HTML page, here sent where JSON belongs.
const htmlPage = "<html><head><title>502 Bad Gateway</title></head><body><center>nginx</center></body></html>"

// htmlStart is how the decoders quote htmlPage: its first 16 bytes.
const htmlStart = `starts with "<html><head><tit"…`

// The first events of an upstream stream, before the HTML page arrives.
const (
	anthropicStart = "event: message_start\n" +
		`data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}` + "\n\n" +
		"event: content_block_start\n" +
		`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n"
	responsesStart = "event: response.created\n" +
		`data: {"type":"response.created","response":{"id":"resp_up","object":"response","status":"in_progress","model":"gpt-up","output":[]},"sequence_number":0}` + "\n\n"
)

// failure returns the error object of a stream's response.failed.
func failure(t *testing.T, evs []sseEvent) map[string]any {
	t.Helper()
	last := terminal(t, evs)
	if last.Name != "response.failed" {
		t.Fatalf("ended with %s, want response.failed", last.Raw)
	}
	e, _ := last.Data["response"].(map[string]any)["error"].(map[string]any)
	if e == nil {
		t.Fatalf("response.failed without an error: %s", last.Raw)
	}
	return e
}

// nonStreaming turns a Codex request into one without "stream": true.
func nonStreaming(body string) string {
	return strings.Replace(body, `"stream":true`, `"stream":false`, 1)
}

// An upstream answer that is not JSON where JSON belongs — an HTML page in
// a data line of a Messages or Responses stream, or as the whole body of a
// chat completion sent as application/json — reaches the client as a
// failure that says what arrived (not JSON, how it starts), where (the
// event and its byte offset in the upstream stream, or the body), and that
// harnessflow could not translate it: as the message of response.failed
// for a streaming client, and as a JSON error body (HTTP 502) for a
// non-streaming one.
func TestNotJSONUpstream(t *testing.T) {
	cases := []struct {
		name        string
		wire        harness.Wire
		path        string
		contentType string
		body        string // the upstream's answer
		want        string // part of the client's error message
	}{
		{"messages data line", harness.WireMessages, "/h/claude-code/v1/responses", "text/event-stream",
			anthropicStart + "event: content_block_delta\ndata: " + htmlPage + "\n\n",
			"anthropic.decode: input 3: content_block_delta event at byte " + strconv.Itoa(len(anthropicStart)) + ": data line is not JSON: " + htmlStart},
		{"responses data line", harness.WireResponses, "/v1/responses", "text/event-stream",
			responsesStart + "data: " + htmlPage + "\n\n",
			"responses.decode: input 2: message event at byte " + strconv.Itoa(len(responsesStart)) + ": data line is not JSON: " + htmlStart},
		{"chat body", harness.WireChat, "/v1/responses", "application/json",
			htmlPage,
			"chat.unary: finish: body is not JSON: " + htmlStart},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", c.contentType)
				_, _ = io.WriteString(w, c.body)
			}))
			p := newProxy(t, up, server.Config{Wire: c.wire})

			// A streaming client: response.failed names the problem.
			e := failure(t, readSSE(t, p.post(t, c.path, codexRequest(userMsg, false), nil).Body))
			msg, _ := e["message"].(string)
			if !strings.HasPrefix(msg, "harnessflow could not translate the upstream stream: ") || !strings.Contains(msg, c.want) {
				t.Errorf("streaming client: message %q, want it to hold %q", msg, c.want)
			}
			if e["code"] != "server_error" {
				t.Errorf("streaming client: code %v", e["code"])
			}

			// A non-streaming client: a JSON error body with the same text.
			resp := p.post(t, c.path, nonStreaming(codexRequest(userMsg, false)), nil)
			data, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			var body struct {
				Error struct {
					Message string `json:"message"`
					Code    string `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(data, &body); err != nil {
				t.Fatalf("non-streaming client: not a JSON error body: %s (%v)", data, err)
			}
			if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body.Error.Message, c.want) {
				t.Errorf("non-streaming client: %d %s, want 502 holding %q", resp.StatusCode, data, c.want)
			}
		})
	}
}

// A harness that asks for one JSON answer (a text-protocol harness's
// non-streaming body) and gets a gateway's HTML page with status 200
// labelled JSON, or not labelled, fails naming the body by how it starts.
// (Labelled text/html, it is refused before any decoder: TestHTMLPageUpstream.)
func TestNotJSONUnaryChatBody(t *testing.T) {
	requireProbe(t)
	for _, contentType := range []string{"application/json", ""} {
		t.Run(contentType, func(t *testing.T) {
			up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", contentType)
				w.WriteHeader(http.StatusOK)
				_, _ = io.WriteString(w, "<!DOCTYPE html>\n"+htmlPage+"\n")
			}))
			p := newProxy(t, up, server.Config{})
			body := withInstructions(codexRequest(userMsg, false), wantUnary)
			e := failure(t, readSSE(t, p.post(t, probePath(), body, nil).Body))
			msg, _ := e["message"].(string)
			if want := `stage chat.unary: finish: body is not JSON: starts with "<!DOCTYPE html>\n"…`; !strings.Contains(msg, want) {
				t.Errorf("message %q, want it to hold %q", msg, want)
			}
		})
	}
}

// An HTML page with status 200 and Content-Type text/html, on a streamed
// turn of every wire and on a unary one, is a 502 that says what came
// instead of a model answer — not a stream said to be cut.
func TestHTMLPageUpstream(t *testing.T) {
	page := "<!DOCTYPE html>\n" + htmlPage + "\n"
	want := `upstream answered HTTP 200 with an HTML page (Content-Type text/html), not a model answer: starts with "<!DOCTYPE html>\n<html>`
	cases := []struct {
		name string
		wire harness.Wire
		path string
		body string
	}{
		{"chat", harness.WireChat, "/v1/responses", codexRequest(userMsg, false)},
		{"messages", harness.WireMessages, "/h/claude-code/v1/responses", codexRequest(userMsg, false)},
		{"responses", harness.WireResponses, "/v1/responses", codexRequest(userMsg, false)},
		{"non-streaming client", harness.WireChat, "/v1/responses", nonStreaming(codexRequest(userMsg, false))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				_, _ = io.WriteString(w, page)
			}))
			p := newProxy(t, up, server.Config{Wire: c.wire})
			resp := p.post(t, c.path, c.body, nil)
			msg, typ := errorBody(t, resp)
			if resp.StatusCode != http.StatusBadGateway || typ != "server_error" || !strings.Contains(msg, want) {
				t.Errorf("%d %s %q, want 502 server_error holding %q", resp.StatusCode, typ, msg, want)
			}
		})
	}
	t.Run("unary turn", func(t *testing.T) {
		requireProbe(t)
		up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, page)
		}))
		p := newProxy(t, up, server.Config{})
		resp := p.post(t, probePath(), withInstructions(codexRequest(userMsg, false), wantUnary), nil)
		if msg, _ := errorBody(t, resp); resp.StatusCode != http.StatusBadGateway || !strings.Contains(msg, want) {
			t.Errorf("%d %q, want 502 holding %q", resp.StatusCode, msg, want)
		}
	})
}
