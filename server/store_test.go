package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/server"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func stored(id, text string) *server.StoredResponse {
	return &server.StoredResponse{ID: id, Model: "m",
		Input:  protocol.Items{protocol.UserMessage("q " + id)},
		Output: protocol.Items{&protocol.Message{ID: "msg_" + id, Role: protocol.RoleAssistant, Content: []protocol.ContentItem{protocol.OutputText(text)}}}}
}

func mustPut(t *testing.T, s server.Store, scope string, r *server.StoredResponse) {
	t.Helper()
	if err := s.Put(context.Background(), scope, r); err != nil {
		t.Fatal(err)
	}
}

func has(s server.Store, scope, id string) bool {
	_, err := s.Get(context.Background(), scope, id)
	return err == nil
}

func TestMemoryStoreRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := server.NewMemoryStore(server.StoreLimits{}, nil)
	in := stored("r1", "hello")
	in.Input = append(in.Input, &protocol.FunctionCall{Name: "f", Arguments: `{"a":1}`, CallID: "c1"},
		&protocol.OtherItem{Type: "compaction", Raw: []byte(`{"type":"compaction","data":"x"}`)})
	mustPut(t, s, "k", in)
	got, err := s.Get(ctx, "k", "r1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in.Input, got.Input); diff != "" {
		t.Errorf("input (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(in.Output, got.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if got.CreatedAt.IsZero() || got.Model != "m" {
		t.Errorf("created %v model %q", got.CreatedAt, got.Model)
	}
	it, err := s.GetItem(ctx, "k", "msg_r1")
	if err != nil || it.(*protocol.Message).Content[0].Text != "hello" {
		t.Errorf("item %v, %v", it, err)
	}
	// Changing what Get returned changes nothing kept.
	got.Output[0].(*protocol.Message).Content[0].Text = "changed"
	if again, _ := s.Get(ctx, "k", "r1"); again.Output[0].(*protocol.Message).Content[0].Text != "hello" {
		t.Error("the store shares memory with what it returned")
	}
	if err := s.Put(ctx, "k", &server.StoredResponse{}); err == nil {
		t.Error("a response without id was kept")
	}
}

// A response is found only under the scope (credential) it was kept with.
func TestMemoryStoreScoping(t *testing.T) {
	ctx := context.Background()
	s := server.NewMemoryStore(server.StoreLimits{}, nil)
	a := server.CredentialScope(http.Header{"Authorization": {"Bearer sk-a"}})
	b := server.CredentialScope(http.Header{"Authorization": {"Bearer sk-b"}})
	key := server.CredentialScope(http.Header{"X-Api-Key": {"sk-a"}})
	if a == b || a == key || a == "" || server.CredentialScope(http.Header{}) != "" {
		t.Fatalf("scopes %q %q %q", a, b, key)
	}
	if strings.Contains(a, "sk-a") || len(a) != 64 {
		t.Errorf("scope %q is not a hash", a)
	}
	mustPut(t, s, a, stored("r1", "secret"))
	for _, scope := range []string{b, key, ""} {
		if _, err := s.Get(ctx, scope, "r1"); !errors.Is(err, server.ErrNotStored) {
			t.Errorf("scope %q: Get = %v", scope, err)
		}
		if _, err := s.GetItem(ctx, scope, "msg_r1"); !errors.Is(err, server.ErrNotStored) {
			t.Errorf("scope %q: GetItem = %v", scope, err)
		}
	}
	// The same id in two scopes: two responses.
	mustPut(t, s, b, stored("r1", "other"))
	ga, _ := s.Get(ctx, a, "r1")
	gb, _ := s.Get(ctx, b, "r1")
	if ga.Output[0].(*protocol.Message).Content[0].Text != "secret" || gb.Output[0].(*protocol.Message).Content[0].Text != "other" {
		t.Error("scopes share responses")
	}
}

func TestMemoryStoreCountLimit(t *testing.T) {
	s := server.NewMemoryStore(server.StoreLimits{MaxResponses: 3}, nil)
	for i := range 5 {
		mustPut(t, s, "k", stored(fmt.Sprint("r", i), "x"))
	}
	for i := range 5 {
		if want := i >= 2; has(s, "k", fmt.Sprint("r", i)) != want {
			t.Errorf("r%d kept: %v, want %v", i, !want, want)
		}
	}
	if _, err := s.GetItem(context.Background(), "k", "msg_r0"); !errors.Is(err, server.ErrNotStored) {
		t.Errorf("an evicted response's item: %v", err)
	}
	st := s.Stats()
	if st.Responses != 3 || st.Evicted["count"] != 2 || st.Puts != 5 {
		t.Errorf("stats %+v", st)
	}
}

func TestMemoryStoreByteLimit(t *testing.T) {
	big := strings.Repeat("x", 1000)
	s := server.NewMemoryStore(server.StoreLimits{MaxBytes: 3700}, nil)
	for i := range 5 {
		mustPut(t, s, "k", stored(fmt.Sprint("r", i), big))
	}
	st := s.Stats()
	if st.Bytes > 3700 || st.Responses != 3 || st.Evicted["bytes"] != 2 {
		t.Errorf("stats %+v", st)
	}
	if has(s, "k", "r1") || !has(s, "k", "r4") {
		t.Error("not the oldest evicted")
	}
	// One response over the limit alone is refused, and nothing else goes.
	err := s.Put(context.Background(), "k", stored("huge", strings.Repeat("y", 4000)))
	if !errors.Is(err, server.ErrNotStored) || has(s, "k", "huge") || s.Stats().Responses != 3 || s.Stats().TooLarge != 1 {
		t.Errorf("huge: %v, stats %+v", err, s.Stats())
	}
}

func TestMemoryStoreTTL(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1700000000, 0)}
	s := server.NewMemoryStore(server.StoreLimits{TTL: 10 * time.Minute}, clock.now)
	mustPut(t, s, "k", stored("old", "x"))
	clock.advance(6 * time.Minute)
	mustPut(t, s, "k", stored("new", "y"))
	clock.advance(5 * time.Minute) // old is 11 minutes old, new 5
	if has(s, "k", "old") || !has(s, "k", "new") {
		t.Error("TTL not applied on Get")
	}
	if _, err := s.GetItem(context.Background(), "k", "msg_old"); !errors.Is(err, server.ErrNotStored) {
		t.Errorf("expired item: %v", err)
	}
	mustPut(t, s, "k", stored("newer", "z")) // drops the expired one
	if st := s.Stats(); st.Responses != 2 || st.Evicted["ttl"] != 1 {
		t.Errorf("stats %+v", st)
	}
	clock.advance(time.Hour)
	mustPut(t, s, "k", stored("last", "z"))
	if st := s.Stats(); st.Responses != 1 || st.Evicted["ttl"] != 3 {
		t.Errorf("stats %+v", st)
	}
}

// Replacing a response keeps the byte count right and its old items go.
func TestMemoryStoreReplace(t *testing.T) {
	s := server.NewMemoryStore(server.StoreLimits{}, nil)
	mustPut(t, s, "k", stored("r", "first"))
	r := stored("r", "second")
	r.Output[0].(*protocol.Message).ID = "msg_other"
	mustPut(t, s, "k", r)
	alone := server.NewMemoryStore(server.StoreLimits{}, nil)
	mustPut(t, alone, "k", r)
	if st := s.Stats(); st.Responses != 1 || st.Bytes != alone.Stats().Bytes || st.Evicted["replaced"] != 1 {
		t.Errorf("stats %+v (alone %d bytes)", st, alone.Stats().Bytes)
	}
	if _, err := s.GetItem(context.Background(), "k", "msg_r"); err == nil {
		t.Error("the replaced response's item is still found")
	}
}

func TestMemoryStoreConcurrent(t *testing.T) {
	s := server.NewMemoryStore(server.StoreLimits{MaxResponses: 50}, nil)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				id := fmt.Sprint("g", g, "-", i)
				if err := s.Put(context.Background(), "k", stored(id, "x")); err != nil {
					t.Error(err)
					return
				}
				_, _ = s.Get(context.Background(), "k", id)
				_, _ = s.GetItem(context.Background(), "k", "msg_"+id)
			}
		})
	}
	wg.Wait()
	if st := s.Stats(); st.Responses != 50 || st.Puts != 800 {
		t.Errorf("stats %+v", st)
	}
}
