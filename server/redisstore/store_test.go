package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/server"
	"github.com/harnessflow/harnessflow/server/redisstore"
)

// stored is a response with one input message and one output message
// whose text is text.
func stored(id, text string) *server.StoredResponse {
	return &server.StoredResponse{ID: id, Model: "m", CreatedAt: time.Now(),
		Input:  protocol.Items{protocol.UserMessage("q " + id)},
		Output: protocol.Items{&protocol.Message{ID: "msg_" + id, Role: protocol.RoleAssistant, Content: []protocol.ContentItem{protocol.OutputText(text)}}}}
}

// open opens a store on rs with the URL query and registers its Close.
func open(t *testing.T, rs *redisServer, query string, defaults server.StoreLimits) *redisstore.Store {
	t.Helper()
	s, err := redisstore.Open(rs.url(query), defaults)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func mustPut(t *testing.T, s server.Store, scope string, r *server.StoredResponse) {
	t.Helper()
	if err := s.Put(context.Background(), scope, r); err != nil {
		t.Fatal(err)
	}
}

func has(t *testing.T, s server.Store, scope, id string) bool {
	t.Helper()
	_, err := s.Get(context.Background(), scope, id)
	switch {
	case err == nil:
		return true
	case errors.Is(err, server.ErrNotStored):
		return false
	}
	t.Fatalf("get %s: %v", id, err)
	return false
}

func TestRoundTrip(t *testing.T) {
	rs := startRedis(t)
	s := open(t, rs, "", server.StoreLimits{})
	ctx := context.Background()
	in := stored("resp_1", "hello")
	in.Input = append(in.Input, &protocol.FunctionCall{Name: "f", Arguments: `{"a":1}`, CallID: "c1"},
		&protocol.OtherItem{Type: "compaction", Raw: []byte(`{"type":"compaction","data":"x"}`)})
	in.Output = append(in.Output, &protocol.FunctionCall{ID: "fc_1", Name: "g", Arguments: `{}`, CallID: "c2"})
	mustPut(t, s, "scope", in)
	got, err := s.Get(ctx, "scope", "resp_1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in.Input, got.Input); diff != "" {
		t.Errorf("input (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(in.Output, got.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if !got.CreatedAt.Equal(in.CreatedAt) || got.Model != "m" || got.ID != "resp_1" {
		t.Errorf("created %v (want %v) model %q id %q", got.CreatedAt, in.CreatedAt, got.Model, got.ID)
	}
	for id, want := range map[string]string{"msg_resp_1": "message", "fc_1": "function_call"} {
		it, err := s.GetItem(ctx, "scope", id)
		if err != nil {
			t.Fatalf("item %s: %v", id, err)
		}
		if it.ItemType() != want {
			t.Errorf("item %s is a %s, want %s", id, it.ItemType(), want)
		}
	}
	if _, err := s.GetItem(ctx, "scope", "msg_none"); !errors.Is(err, server.ErrNotStored) {
		t.Errorf("missing item: %v", err)
	}
	if err := s.Put(ctx, "scope", &server.StoredResponse{}); err == nil {
		t.Error("a response without id was kept")
	}
	// A response made without a creation time gets the store's clock.
	mustPut(t, s, "scope", &server.StoredResponse{ID: "resp_2"})
	if got, err := s.Get(ctx, "scope", "resp_2"); err != nil || got.CreatedAt.IsZero() || len(got.Output) != 0 {
		t.Errorf("resp_2: %+v, %v", got, err)
	}
}

// A response is found only under the scope it was put with; no key or
// value in Redis holds the credential or the scope.
func TestScoping(t *testing.T) {
	rs := startRedis(t)
	s := open(t, rs, "", server.StoreLimits{})
	ctx := context.Background()
	const credential = "Bearer sk-secret-credential-0123456789"
	scopeA := server.CredentialScope(map[string][]string{"Authorization": {credential}})
	scopeB := server.CredentialScope(map[string][]string{"Authorization": {"Bearer sk-another-credential-987654"}})
	mustPut(t, s, scopeA, stored("resp_a", "for A"))
	mustPut(t, s, "", stored("resp_anon", "for nobody"))
	if !has(t, s, scopeA, "resp_a") {
		t.Fatal("A does not find its own response")
	}
	for _, sc := range []string{scopeB, ""} {
		if has(t, s, sc, "resp_a") {
			t.Errorf("scope %q finds A's response", sc)
		}
		if _, err := s.GetItem(ctx, sc, "msg_resp_a"); !errors.Is(err, server.ErrNotStored) {
			t.Errorf("scope %q: A's item: %v", sc, err)
		}
	}
	if has(t, s, scopeA, "resp_anon") || !has(t, s, "", "resp_anon") {
		t.Error("the scope without credential is not its own")
	}
	// The same response id under two scopes: two responses.
	mustPut(t, s, scopeB, stored("resp_a", "for B"))
	a, _ := s.Get(ctx, scopeA, "resp_a")
	b, _ := s.Get(ctx, scopeB, "resp_a")
	if text(a) != "for A" || text(b) != "for B" {
		t.Errorf("A sees %q, B sees %q", text(a), text(b))
	}
	c := rs.client(t)
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, redisstore.DefaultPrefix) {
			t.Errorf("key %q is outside the prefix", k)
		}
		for _, secret := range []string{"sk-secret", scopeA, scopeB} {
			if strings.Contains(k, secret) {
				t.Errorf("key %q holds %q", k, secret)
			}
		}
		if typ, _ := c.Type(ctx, k).Result(); typ == "string" {
			v, _ := c.Get(ctx, k).Result()
			if strings.Contains(v, "sk-secret") || strings.Contains(v, scopeA) {
				t.Errorf("value of %q holds the credential or its scope", k)
			}
		}
	}
}

func text(r *server.StoredResponse) string {
	if r == nil || len(r.Output) == 0 {
		return ""
	}
	m, _ := r.Output[0].(*protocol.Message)
	if m == nil || len(m.Content) == 0 {
		return ""
	}
	return m.Content[0].Text
}

// Responses expire TTL after they were made: Redis drops their keys, and
// the next put drops their bookkeeping.
func TestTTLExpiry(t *testing.T) {
	rs := startRedis(t)
	s := open(t, rs, "ttl=400ms", server.StoreLimits{TTL: time.Hour})
	if s.Limits().TTL != 400*time.Millisecond {
		t.Fatalf("limits %+v: the URL's ttl was not taken", s.Limits())
	}
	ctx := context.Background()
	mustPut(t, s, "k", stored("resp_old", "old"))
	c := rs.client(t)
	pttl, err := c.PTTL(ctx, responseKey(t, c, "resp_old")).Result()
	if err != nil || pttl <= 0 || pttl > 400*time.Millisecond {
		t.Errorf("the response key expires in %v (%v), want within 400ms", pttl, err)
	}
	if !has(t, s, "k", "resp_old") {
		t.Fatal("not found at once")
	}
	if _, err := s.GetItem(ctx, "k", "msg_resp_old"); err != nil {
		t.Fatalf("item not found at once: %v", err)
	}
	time.Sleep(600 * time.Millisecond)
	if has(t, s, "k", "resp_old") {
		t.Error("found after its TTL")
	}
	if _, err := s.GetItem(ctx, "k", "msg_resp_old"); !errors.Is(err, server.ErrNotStored) {
		t.Errorf("item after its TTL: %v", err)
	}
	// A response made longer ago than the TTL is not kept.
	old := stored("resp_ancient", "x")
	old.CreatedAt = time.Now().Add(-time.Second)
	mustPut(t, s, "k", old)
	if has(t, s, "k", "resp_ancient") {
		t.Error("a response older than the TTL was kept")
	}
	mustPut(t, s, "k", stored("resp_new", "new"))
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := size(stored("resp_new", "new"), "k")
	if st.Responses != 1 || st.Bytes != want || st.Evicted["ttl"] != 2 || st.Puts != 3 {
		t.Errorf("stats %+v, want 1 response of %d bytes, 3 puts, 2 dropped for their age", st, want)
	}
}

// responseKey finds the Redis key of the response id.
func responseKey(t *testing.T, c *redis.Client, id string) string {
	t.Helper()
	keys, err := c.Keys(context.Background(), redisstore.DefaultPrefix+"r:*:"+id).Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys of %s: %v, %v", id, keys, err)
	}
	return keys[0]
}

// size is what the in-memory store counts for r under scope.
func size(r *server.StoredResponse, scope string) int64 {
	m := server.NewMemoryStore(server.StoreLimits{}, nil)
	if err := m.Put(context.Background(), scope, r); err != nil {
		return -1
	}
	return m.Stats().Bytes
}

// A response over MaxBytes alone is refused; past MaxBytes or
// MaxResponses in all the oldest responses go first.
func TestSizeLimits(t *testing.T) {
	rs := startRedis(t)
	ctx := context.Background()
	one := size(stored("resp_0", strings.Repeat("x", 100)), "k")

	t.Run("too_large", func(t *testing.T) {
		s := open(t, rs, fmt.Sprintf("prefix=big:&max_bytes=%d", one-1), server.StoreLimits{})
		err := s.Put(ctx, "k", stored("resp_0", strings.Repeat("x", 100)))
		if !errors.Is(err, server.ErrNotStored) || !strings.Contains(err.Error(), fmt.Sprintf("%d bytes, over the store's %d", one, one-1)) {
			t.Fatalf("put over the limit: %v", err)
		}
		if has(t, s, "k", "resp_0") {
			t.Error("kept anyway")
		}
		if st, _ := s.Stats(ctx); st.TooLarge != 1 || st.Responses != 0 || st.Bytes != 0 {
			t.Errorf("stats %+v", st)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		// Room for two responses of this size, not three.
		s := open(t, rs, "prefix=bytes:", server.StoreLimits{MaxBytes: 2*one + one/2})
		base := time.Now()
		for i := range 4 {
			r := stored(fmt.Sprintf("resp_%d", i), strings.Repeat("x", 100))
			r.CreatedAt = base.Add(time.Duration(i) * time.Millisecond)
			mustPut(t, s, "k", r)
		}
		for i, want := range []bool{false, false, true, true} {
			if got := has(t, s, "k", fmt.Sprintf("resp_%d", i)); got != want {
				t.Errorf("resp_%d kept: %v, want %v", i, got, want)
			}
		}
		if _, err := s.GetItem(ctx, "k", "msg_resp_0"); !errors.Is(err, server.ErrNotStored) {
			t.Errorf("an evicted response's item: %v", err)
		}
		st, _ := s.Stats(ctx)
		if st.Responses != 2 || st.Bytes != 2*one || st.Evicted["bytes"] != 2 {
			t.Errorf("stats %+v, want 2 responses of %d bytes, 2 dropped for bytes", st, 2*one)
		}
	})
	t.Run("count", func(t *testing.T) {
		s := open(t, rs, "prefix=count:&max_responses=3", server.StoreLimits{MaxResponses: 100})
		base := time.Now()
		for i := range 5 {
			r := stored(fmt.Sprintf("resp_%d", i), "x")
			r.CreatedAt = base.Add(time.Duration(i) * time.Millisecond)
			mustPut(t, s, "k", r)
		}
		for i, want := range []bool{false, false, true, true, true} {
			if got := has(t, s, "k", fmt.Sprintf("resp_%d", i)); got != want {
				t.Errorf("resp_%d kept: %v, want %v", i, got, want)
			}
		}
		// Replacing a response keeps one copy and frees the old bytes.
		r := stored("resp_4", "replaced")
		r.CreatedAt = base.Add(10 * time.Millisecond)
		mustPut(t, s, "k", r)
		got, _ := s.Get(ctx, "k", "resp_4")
		st, _ := s.Stats(ctx)
		if text(got) != "replaced" || st.Responses != 3 || st.Evicted["replaced"] != 1 || st.Evicted["count"] != 2 {
			t.Errorf("after the replacement: %q, stats %+v", text(got), st)
		}
	})
}

// The Redis store keeps and drops exactly what the in-memory store does
// for the same puts under the same count and byte limits.
func TestSameAsMemoryStore(t *testing.T) {
	rs := startRedis(t)
	ctx := context.Background()
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			limits := server.StoreLimits{MaxResponses: 6, MaxBytes: 2500}
			red := open(t, rs, fmt.Sprintf("prefix=diff%d:", seed), limits)
			mem := server.NewMemoryStore(limits, nil)
			rng := rand.New(rand.NewPCG(seed, 7))
			scopes := []string{"", "scope-a", "scope-b"}
			base := time.Now()
			for step := range 100 {
				scope := scopes[rng.IntN(len(scopes))]
				id := fmt.Sprintf("resp_%d", rng.IntN(12))
				r := stored(id, strings.Repeat("y", rng.IntN(700)))
				// Items shared between responses: the newest holder wins.
				r.Output[0].(*protocol.Message).ID = fmt.Sprintf("msg_%d", rng.IntN(8))
				r.CreatedAt = base.Add(time.Duration(step) * time.Millisecond)
				errM, errR := mem.Put(ctx, scope, r), red.Put(ctx, scope, r)
				if (errM == nil) != (errR == nil) || errM != nil && !errors.Is(errR, server.ErrNotStored) {
					t.Fatalf("step %d: put: memory %v, redis %v", step, errM, errR)
				}
				for _, sc := range scopes {
					for i := range 12 {
						id := fmt.Sprintf("resp_%d", i)
						m, errM := mem.Get(ctx, sc, id)
						r, errR := red.Get(ctx, sc, id)
						if (errM == nil) != (errR == nil) || text(m) != text(r) {
							t.Fatalf("step %d: %q %s: memory %q %v, redis %q %v", step, sc, id, text(m), errM, text(r), errR)
						}
					}
					for i := range 8 {
						id := fmt.Sprintf("msg_%d", i)
						m, errM := mem.GetItem(ctx, sc, id)
						r, errR := red.GetItem(ctx, sc, id)
						if (errM == nil) != (errR == nil) || errM == nil && cmp.Diff(m, r) != "" {
							t.Fatalf("step %d: %q item %s: memory %v %v, redis %v %v", step, sc, id, m, errM, r, errR)
						}
					}
				}
				ms, _ := red.Stats(ctx)
				if mm := mem.Stats(); ms.Responses != mm.Responses || ms.Bytes != mm.Bytes {
					t.Fatalf("step %d: redis holds %d responses, %d bytes; memory %d, %d", step, ms.Responses, ms.Bytes, mm.Responses, mm.Bytes)
				}
			}
			ms, mm := mustStats(t, red), mem.Stats()
			if diff := cmp.Diff(mm, ms); diff != "" {
				t.Errorf("stats (-memory +redis):\n%s", diff)
			}
		})
	}
}

func mustStats(t *testing.T, s *redisstore.Store) server.StoreStats {
	t.Helper()
	st, err := s.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Concurrent puts from several stores (replicas) on one Redis keep the
// limits and the bookkeeping consistent.
func TestConcurrentReplicas(t *testing.T) {
	rs := startRedis(t)
	ctx := context.Background()
	limits := server.StoreLimits{MaxResponses: 20}
	stores := []*redisstore.Store{open(t, rs, "", limits), open(t, rs, "", limits), open(t, rs, "", limits)}
	var wg sync.WaitGroup
	errs := make(chan error, 300)
	for g := range 6 {
		wg.Go(func() {
			s := stores[g%len(stores)]
			for i := range 50 {
				if err := s.Put(ctx, fmt.Sprint("scope", g%2), stored(fmt.Sprintf("resp_%d_%d", g, i), strings.Repeat("z", i))); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := mustStats(t, stores[0])
	if st.Responses != 20 || st.Puts != 300 || st.Evicted["count"] != 280 {
		t.Errorf("stats %+v, want 20 responses of 300 puts, 280 dropped for the count", st)
	}
	c := rs.client(t)
	metas, err := c.HGetAll(ctx, redisstore.DefaultPrefix+"meta").Result()
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for rkey, m := range metas {
		var n int64
		if _, err := fmt.Sscanf(m, `{"s":%d`, &n); err != nil {
			t.Fatalf("meta %q: %v", m, err)
		}
		sum += n
		if c.Exists(ctx, rkey).Val() != 1 {
			t.Errorf("%s is in the index but not in Redis", rkey)
		}
	}
	if len(metas) != 20 || sum != st.Bytes {
		t.Errorf("%d entries of %d bytes in the index, counters say %d, %d", len(metas), sum, st.Responses, st.Bytes)
	}
	if keys := c.Keys(ctx, redisstore.DefaultPrefix+"i:*").Val(); len(keys) != 20 {
		t.Errorf("%d item keys, want 20", len(keys))
	}
}

// A Redis outage makes every call fail with ErrUnavailable (never
// ErrNotStored, which would be a client error), fast during the cooldown;
// once Redis is back the store works again.
func TestOutage(t *testing.T) {
	rs := startRedis(t)
	ctx := context.Background()
	s := open(t, rs, "cooldown=300ms&write_retry=0", server.StoreLimits{})
	mustPut(t, s, "k", stored("resp_1", "before"))
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	rs.stop()

	start := time.Now()
	_, err := s.Get(ctx, "k", "resp_1")
	if !errors.Is(err, redisstore.ErrUnavailable) || errors.Is(err, server.ErrNotStored) {
		t.Fatalf("get during the outage: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the first failing call took %v", d)
	}
	t.Logf("first failure after %v: %v", time.Since(start), err)
	start = time.Now()
	for _, call := range []func() error{
		func() error { return s.Put(ctx, "k", stored("resp_2", "during")) },
		func() error { _, err := s.GetItem(ctx, "k", "msg_resp_1"); return err },
		func() error { _, err := s.Get(ctx, "k", "resp_1"); return err },
	} {
		if err := call(); !errors.Is(err, redisstore.ErrUnavailable) || !strings.Contains(err.Error(), "failing fast") {
			t.Errorf("call during the cooldown: %v", err)
		}
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("three calls during the cooldown took %v", d)
	}

	rs.restart(t)
	deadline := time.Now().Add(5 * time.Second)
	for {
		err = s.Put(ctx, "k", stored("resp_3", "after"))
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("put after Redis came back: %v", err)
	}
	if !has(t, s, "k", "resp_3") {
		t.Error("the response put after the outage is not found")
	}
	// The restarted server kept nothing (no persistence): a plain miss.
	if has(t, s, "k", "resp_1") {
		t.Error("resp_1 survived a restart without persistence")
	}
}

// A Put that meets an outage shorter than write_retry keeps trying and
// keeps its response once Redis is back (restarted with what it had
// acknowledged); one that meets a longer outage fails with ErrUnavailable
// after write_retry, saying how often it tried.
func TestPutRetriesThroughOutage(t *testing.T) {
	rs := startPersistentRedis(t)
	ctx := context.Background()
	s := open(t, rs, "cooldown=100ms&write_retry=3s", server.StoreLimits{})
	mustPut(t, s, "k", stored("resp_1", "before"))
	rs.stop()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- s.Put(ctx, "k", stored("resp_2", "during")) }()
	time.Sleep(500 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("Put returned during the outage: %v", err)
	default:
	}
	rs.restart(t)
	if err := <-done; err != nil {
		t.Fatalf("Put across a %v outage: %v", 500*time.Millisecond, err)
	}
	t.Logf("Put across the outage returned after %v", time.Since(start))
	if !has(t, s, "k", "resp_1") || !has(t, s, "k", "resp_2") {
		t.Error("a response acknowledged before or kept after the outage is missing")
	}

	short := open(t, rs, "cooldown=100ms&write_retry=400ms", server.StoreLimits{})
	rs.stop()
	start = time.Now()
	err := short.Put(ctx, "k", stored("resp_3", "lost"))
	took := time.Since(start)
	if !errors.Is(err, redisstore.ErrUnavailable) || errors.Is(err, server.ErrNotStored) || !strings.Contains(err.Error(), "attempts in") {
		t.Errorf("Put through a long outage: %v", err)
	}
	if took < 300*time.Millisecond {
		t.Errorf("Put gave up after %v, before write_retry", took)
	}
	t.Logf("Put gave up after %v: %v", took, err)
	// A cancelled request stops the retries.
	cctx, cancel := context.WithCancel(ctx)
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if err := s.Put(cctx, "k", stored("resp_4", "cancelled")); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled Put: %v", err)
	}
}

func TestOpenURL(t *testing.T) {
	defaults := server.StoreLimits{MaxResponses: 10, MaxBytes: 1000, TTL: time.Minute}
	for _, tc := range []struct {
		url, err string
		want     server.StoreLimits
	}{
		{url: "redis://127.0.0.1:1/0", want: defaults},
		{url: "redis://:pw@127.0.0.1:1/2?max_responses=0&max_bytes=5&ttl=2h&dial_timeout=3s", want: server.StoreLimits{MaxBytes: 5, TTL: 2 * time.Hour}},
		{url: "redis://127.0.0.1:1?ttl=0", want: server.StoreLimits{MaxResponses: 10, MaxBytes: 1000}},
		{url: "redis://:hunter2@127.0.0.1:1?ttl=forever", err: `redisstore: URL "redis://:xxxxx@127.0.0.1:1?ttl=forever": ttl="forever": want a duration such as 1h (0: forever)`},
		{url: "redis://127.0.0.1:1?max_responses=-1", err: `max_responses="-1": want a count`},
		{url: "redis://127.0.0.1:1?prefix=", err: "prefix is empty"},
		{url: "redis://127.0.0.1:1?write_retry=soon", err: `write_retry="soon": want a duration`},
		{url: "redis://127.0.0.1:1?write_retry=2s&cooldown=0", want: defaults},
		{url: "redis://:hunter2@127.0.0.1:1?bogus=1", err: "redis: unexpected option: bogus"},
		{url: "http://127.0.0.1:1", err: "invalid URL scheme"},
	} {
		s, err := redisstore.Open(tc.url, defaults)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "hunter2") {
				t.Errorf("%s: error %v, want %q (and no password)", tc.url, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.url, err)
			continue
		}
		if s.Limits() != tc.want {
			t.Errorf("%s: limits %+v, want %+v", tc.url, s.Limits(), tc.want)
		}
		if strings.Contains(s.String(), "pw@") {
			t.Errorf("String() shows the password: %s", s)
		}
		s.Close()
	}
}
