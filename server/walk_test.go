package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/opencode"
	"github.com/harnessflow/harnessflow/internal/layers"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/server"
	"github.com/harnessflow/harnessflow/stages/request"
)

var registerWalkProbe sync.Once

// walkProbe registers "walk-probe": opencode's spec whose request graph
// records the walk of the request direction in its last stage.
func walkProbe(rec *[]string, climbs *int) {
	registerWalkProbe.Do(func() {
		s := opencode.Spec()
		shape := s.Request
		s.Name, s.RouteName = "walk-probe", "WalkProbe"
		var once sync.Once
		s.Request = func(env *harness.Env) (*pipeline.Graph, error) {
			g, err := shape(env)
			if err != nil {
				return nil, err
			}
			return g.Append(pipeline.StageNode("test.walk", pipeline.Map(func(v request.Shaped) request.Shaped {
				once.Do(func() { *rec, *climbs = walk() })
				return v
			})))
		}
		harness.MustRegister(s)
	})
}

// walk returns the module's packages on the calling goroutine's stack,
// outermost first, consecutive repeats collapsed, and how many times the
// walk goes from a package to one of a higher layer (a call back up).
func walk() (pkgs []string, climbs int) {
	pcs := make([]uintptr, 256)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	var inner []string
	for {
		f, more := frames.Next()
		if rel, ok := strings.CutPrefix(f.Function, layers.Module+"/"); ok {
			// "server.(*Server).proxy" → "server"; "harness/native.Spec.func1" → "harness/native"
			slash := strings.LastIndex(rel, "/")
			dot := strings.Index(rel[slash+1:], ".")
			pkg := rel[:slash+1+dot]
			if !strings.HasSuffix(f.File, "_test.go") {
				inner = append(inner, pkg)
			}
		}
		if !more {
			break
		}
	}
	for i := len(inner) - 1; i >= 0; i-- {
		if len(pkgs) > 0 && pkgs[len(pkgs)-1] == inner[i] {
			continue
		}
		if len(pkgs) > 0 && layers.Of(inner[i]) > layers.Of(pkgs[len(pkgs)-1]) {
			climbs++
		}
		pkgs = append(pkgs, inner[i])
	}
	return pkgs, climbs
}

// recordWalk is an http.RoundTripper that records the walk of the first
// upstream request.
type recordWalk struct {
	once  sync.Once
	pkgs  []string
	climb int
}

func (w *recordWalk) RoundTrip(r *http.Request) (*http.Response, error) {
	w.once.Do(func() { w.pkgs, w.climb = walk() })
	return http.DefaultTransport.RoundTrip(r)
}

// TestRequestWalk takes the stack of one request through serve on a
// harness route (opencode) at the two points every request passes: the
// upstream request leaving, and an event in the response graph. The walk
// must go server → … → the transport for the request, and through the
// stage packages for the response; HARNESSFLOW_WALK=1 prints both walks
// (the package walk of docs/architecture.md#wire-codecs).
func TestRequestWalk(t *testing.T) {
	upstream := httptest.NewServer(scripted.New(scripted.Default()))
	defer upstream.Close()
	var shapePkgs []string
	var shapeClimbs int
	walkProbe(&shapePkgs, &shapeClimbs)
	rt := &recordWalk{}
	var once sync.Once
	var respPkgs []string
	var respClimbs int
	probe := func(server.StreamInfo) []pipeline.Edit {
		return []pipeline.Edit{func(g *pipeline.Graph) (*pipeline.Graph, error) {
			return g.Append(pipeline.StageNode("test.walk", pipeline.Map(func(ev protocol.ResponseEvent) protocol.ResponseEvent {
				once.Do(func() { respPkgs, respClimbs = walk() })
				return ev
			})))
		}}
	}
	proxy := server.New(server.Config{Upstream: upstream.URL + "/v1", Client: &http.Client{Transport: rt}, Extend: probe,
		Logger: slog.New(slog.DiscardHandler)})
	defer proxy.CloseIdleConnections()
	front := httptest.NewServer(proxy.Handler())
	defer front.Close()
	body := `{"model":"m","input":"list the files","stream":true,"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}}]}`
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, front.URL+"/h/walk-probe/v1/responses", strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(rt.pkgs) == 0 || len(respPkgs) == 0 {
		t.Fatalf("status %d, request walk %v, response walk %v\n%s", resp.StatusCode, rt.pkgs, respPkgs, answer)
	}
	if len(shapePkgs) == 0 || shapePkgs[0] != "server" || !contains(shapePkgs, "harness") || !contains(shapePkgs, "stages/request") {
		t.Errorf("shaping walk %v: want server → … harness … stages/request", shapePkgs)
	}
	if rt.pkgs[0] != "server" {
		t.Errorf("request walk %v: want it to start in server", rt.pkgs)
	}
	if !contains(respPkgs, "pipeline") {
		t.Errorf("response walk %v: want the pipeline in it", respPkgs)
	}
	if os.Getenv("HARNESSFLOW_WALK") != "" {
		t.Logf("shaping: %d stays, %d climbs: %s", len(shapePkgs), shapeClimbs, strings.Join(shapePkgs, " → "))
		t.Logf("request: %d stays, %d climbs: %s", len(rt.pkgs), rt.climb, strings.Join(rt.pkgs, " → "))
		t.Logf("response: %d stays, %d climbs: %s", len(respPkgs), respClimbs, strings.Join(respPkgs, " → "))
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
