package upstream_test

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	_ "github.com/harnessflow/harnessflow/harness/native"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sinks"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/upstream"
	"github.com/harnessflow/harnessflow/wire"
)

func TestNewRequest(t *testing.T) {
	shaped := request.Shaped{Headers: map[string]string{"anthropic-beta": "x", "Authorization": "Bearer stolen", "x-api-key": "stolen", "Host": "evil"},
		Query: map[string]string{"beta": "true"}}
	for _, tc := range []struct {
		c                  upstream.Client
		url, header, value string
	}{
		{upstream.Client{Base: "http://h/v1", Auth: "Bearer k"}, "http://h/v1/chat/completions?beta=true", "Authorization", "Bearer k"},
		{upstream.Client{Base: "http://h/v1", Wire: wire.Responses, Auth: "Bearer k"}, "http://h/v1/responses?beta=true", "Authorization", "Bearer k"},
		{upstream.Client{Base: "http://h/v1", Wire: wire.Messages, Auth: "Bearer k"}, "http://h/v1/messages?beta=true", "X-Api-Key", "k"},
		{upstream.Client{Base: "http://h/v1", Wire: wire.Messages, ClientKey: "ck"}, "http://h/v1/messages?beta=true", "X-Api-Key", "ck"},
	} {
		r, err := tc.c.NewRequest(context.Background(), shaped, []byte(`{}`), true)
		if err != nil {
			t.Fatal(err)
		}
		if r.URL.String() != tc.url || r.Header.Get(tc.header) != tc.value || r.Header.Get("anthropic-beta") != "x" ||
			r.Header.Get("Accept") != "text/event-stream" || r.Header.Get("Accept-Encoding") != "gzip" || r.Host != "h" {
			t.Errorf("%s: %s %s=%q headers %v", tc.c.Wire, r.URL, tc.header, r.Header.Get(tc.header), r.Header)
		}
		if tc.c.Wire == wire.Messages && (r.Header.Get("Authorization") != "" || r.Header.Get("anthropic-version") == "") {
			t.Errorf("messages: Authorization %q, anthropic-version %q", r.Header.Get("Authorization"), r.Header.Get("anthropic-version"))
		}
		if strings.Contains(r.Header.Get("Authorization")+r.Header.Get("X-Api-Key"), "stolen") {
			t.Errorf("%s: the shaped request's credentials went upstream", tc.c.Wire)
		}
	}
	if _, err := (&upstream.Client{Wire: "nosuch"}).NewRequest(context.Background(), shaped, nil, false); err == nil || !strings.Contains(err.Error(), `no codec for wire "nosuch"`) {
		t.Errorf("unknown wire: %v", err)
	}
}

const chatAnswer = "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi there\"}}]}\n\n" +
	"data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"

func TestStream(t *testing.T) {
	for _, gz := range []bool{false, true} {
		var got *http.Request
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got = r
			w.Header().Set("Content-Type", "text/event-stream")
			if gz {
				w.Header().Set("Content-Encoding", "gzip")
				zw := gzip.NewWriter(w)
				io.WriteString(zw, chatAnswer)
				zw.Close()
				return
			}
			io.WriteString(w, chatAnswer)
		}))
		ex, err := harness.Open(context.Background(), harness.Config{Wire: wire.Chat},
			harness.Opening{Request: &protocol.ResponsesRequest{Model: "m", Stream: true, Input: []protocol.ResponseItem{
				&protocol.Message{Role: protocol.RoleUser, Content: []protocol.ContentItem{protocol.InputText("hello")}}}}})
		if err != nil {
			t.Fatal(err)
		}
		c := upstream.Client{Base: srv.URL, Auth: "Bearer k"}
		events := sinks.Collect[protocol.ResponseEvent]()
		if err := c.Stream(context.Background(), ex, events); err != nil {
			t.Fatalf("gzip %v: %v", gz, err)
		}
		var text string
		for _, ev := range events.Items() {
			if ev.Type == protocol.EventOutputTextDelta {
				text += ev.Delta
			}
		}
		if text != "hi there" || got.URL.Path != "/chat/completions" || got.Header.Get("Authorization") != "Bearer k" {
			t.Errorf("gzip %v: text %q, path %s, auth %q", gz, text, got.URL.Path, got.Header.Get("Authorization"))
		}
		srv.Close()
	}
}

func TestSendRefusals(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" {
			http.Redirect(w, r, "http://elsewhere.invalid/steal", http.StatusTemporaryRedirect)
			return
		}
		http.Error(w, `{"error":"no"}`, http.StatusTooManyRequests)
	}))
	defer srv.Close()
	ex, err := harness.Open(context.Background(), harness.Config{Wire: wire.Chat},
		harness.Opening{Request: &protocol.ResponsesRequest{Model: "m", Stream: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, base := range []string{srv.URL, srv.URL + "/v1"} {
		_, err := (&upstream.Client{Base: base}).Send(context.Background(), ex)
		if !errors.Is(err, upstream.ErrStatus) {
			t.Errorf("%s: %v, want ErrStatus (a redirect is not followed)", base, err)
		}
	}
	if _, err := (&upstream.Client{}).Send(context.Background(), &harness.Exchange{}); err == nil {
		t.Error("Send without a turn: no error")
	}
}
