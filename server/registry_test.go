package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/server"
	"github.com/harnessflow/harnessflow/stages/request"
)

// ownSpec is a chat harness of the test's own, in no process registry: the
// chat request graph with a header marking the requests it shaped.
func ownSpec(name string) harness.Spec {
	return harness.Spec{Name: name, Wires: []harness.Wire{harness.WireChat},
		Request: func(env *harness.Env) (*pipeline.Graph, error) {
			g, err := request.NewChatGraph(env.RequestOptions())
			if err != nil {
				return nil, err
			}
			return g.InsertBefore(request.NodeEncode, pipeline.StageNode("own.mark", request.Update(func(s *request.Shaping) error {
				s.Headers = map[string]string{"X-Shaped-By": name}
				return nil
			})))
		}}
}

// Config.Registry is what the proxy serves: a server whose registry holds
// a spec of its own serves its /h/NAME/ routes with that spec's shaping;
// one on the process registry, which lacks it, answers the unknown
// harness error on the same routes.
func TestConfigRegistry(t *testing.T) {
	const name = "own-agent"
	if _, ok := harness.Lookup(name); ok {
		t.Fatalf("the process registry holds %q", name)
	}
	reg, err := harness.Default().With(ownSpec(name))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{h: scripted.New(nil)}
	up := newUpstream(t, rec)
	body := `{"model":"m","input":"hello","stream":true}`

	with := newProxy(t, up, server.Config{Registry: reg})
	resp := with.post(t, "/h/"+name+"/v1/responses", body, nil)
	evs := readSSE(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || terminal(t, evs).Name != "response.completed" {
		t.Fatalf("with the spec: HTTP %d, %v", resp.StatusCode, names(evs))
	}
	if _, _, h := rec.last(t); h.Get("X-Shaped-By") != name {
		t.Errorf("the upstream request was not shaped by %s: headers %v", name, h)
	}
	resp, err = with.client.Get(with.ts.URL + "/h/" + name + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		t.Errorf("GET /h/%s/v1/models with the spec: HTTP 404", name)
	}

	without := newProxy(t, up, server.Config{})
	for _, path := range []string{"/h/" + name + "/v1/responses", "/h/" + name + "/v1/chat/completions"} {
		in := body
		if strings.Contains(path, "chat") {
			in = `{"model":"m","messages":[{"role":"user","content":"hello"}],"stream":true}`
		}
		resp := without.post(t, path, in, nil)
		msg, _ := errorBody(t, resp)
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(msg, `unknown harness "`+name+`"`) {
			t.Errorf("%s without the spec: HTTP %d %q; want 404 naming the unknown harness", path, resp.StatusCode, msg)
		}
	}
	resp, err = without.client.Get(without.ts.URL + "/h/" + name + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /h/%s/v1/models without the spec: HTTP %d; want 404", name, resp.StatusCode)
	}
}
