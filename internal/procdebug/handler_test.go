package procdebug

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The handler's routes: runtime statistics as JSON, a named profile, the
// index, and a clear refusal of an unknown profile and a bad duration.
func TestHandler(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get("/debug/runtime")
	var st RuntimeStats
	if code != 200 || json.Unmarshal([]byte(body), &st) != nil || st.Goroutines == 0 || st.GOMAXPROCS == 0 {
		t.Errorf("/debug/runtime: %d %s", code, body)
	}
	if code, body := get("/debug/pprof/goroutine?debug=1"); code != 200 || !strings.Contains(body, "goroutine") {
		t.Errorf("goroutine profile: %d %.80s", code, body)
	}
	if code, body := get("/debug/pprof/"); code != 200 || !strings.Contains(body, "/debug/pprof/heap") {
		t.Errorf("index: %d %s", code, body)
	}
	if code, body := get("/debug/pprof/nothing"); code != 404 || !strings.Contains(body, `no profile "nothing"`) {
		t.Errorf("unknown profile: %d %s", code, body)
	}
	if code, body := get("/debug/pprof/profile?seconds=0"); code != 400 || !strings.Contains(body, "seconds: want 1 to") {
		t.Errorf("bad seconds: %d %s", code, body)
	}
}
