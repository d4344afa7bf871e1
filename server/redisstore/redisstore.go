// Package redisstore is a response store ([server.Store]) kept in Redis, so
// that several harnessflow replicas behind a load balancer share the
// responses that previous_response_id and item_reference name: any replica
// serves any turn of any conversation.
//
// It keeps what the in-memory store keeps, with the same limits: at most
// StoreLimits.MaxResponses responses and StoreLimits.MaxBytes bytes of their
// JSON (the oldest are dropped first; a response over MaxBytes alone is not
// kept), each for StoreLimits.TTL after it was made (a Redis expiry on its
// keys). Limits count every response of the Redis database under the key
// prefix, whichever replica kept it: give every replica the same URL.
//
// Keys (all under Options.Prefix, "harnessflow:" by default):
//
//	PREFIX r:SCOPE:ID       one response (JSON: model, created, input, output items)
//	PREFIX i:SCOPE:ITEMID   where an output item is: "INDEX\nRESPONSE KEY"
//	PREFIX order            sorted set of the response keys by creation time (ms)
//	PREFIX meta             hash: response key → its size and item keys (for eviction)
//	PREFIX bytes            the bytes kept in all
//	PREFIX stats            hash: puts, too_large, evicted_REASON counters
//
// SCOPE is a hash of the caller's credential scope ([server.CredentialScope],
// itself a hash), never the credential: a response is found only with the
// credential that made it, and nothing in Redis reveals the key.
//
// Writes run as one Lua script (replace, drop the expired, add, evict while
// over a limit), so concurrent replicas keep the counters right. The keys
// the script drops are computed inside it, so it needs a single Redis server
// (or a primary with replicas), not Redis Cluster; and Redis 6.2 or newer
// (SET … PXAT).
//
// When Redis cannot be reached or fails, every call returns an error
// wrapping [ErrUnavailable]. A Put tries again for Options.WriteRetry (with
// backoff) before it gives up, so that a response finishing in a short
// outage is still kept; Get and GetItem fail at once. After a failure the
// lookups fail fast for Options.Cooldown before they try Redis again, so
// that an outage does not slow every request down by a connection timeout.
// What the proxy tells its clients then is in the README ("Running several
// replicas").
package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/server"
)

// DefaultPrefix starts every key of a store without Options.Prefix.
const DefaultPrefix = "harnessflow:"

// DefaultCooldown is how long a store fails fast after Redis failed
// (Options.Cooldown).
const DefaultCooldown = time.Second

// DefaultWriteRetry is how long a Put keeps trying a write Redis did not
// take (Options.WriteRetry).
const DefaultWriteRetry = 5 * time.Second

// The backoff between a Put's attempts: doubling from the first to the
// last.
const (
	retryFirstBackoff = 50 * time.Millisecond
	retryMaxBackoff   = 250 * time.Millisecond
)

// Connection defaults of Open for what its URL does not set: short, so that
// an unreachable Redis costs a request little (go-redis's own defaults are
// 5 s timeouts and 3 retries).
const (
	DefaultDialTimeout = time.Second
	DefaultIOTimeout   = 2 * time.Second
	DefaultMaxRetries  = 1
)

// ErrUnavailable is wrapped by the errors of a store whose Redis could not
// be reached, timed out or answered with an error.
var ErrUnavailable = errors.New("the Redis response store is unavailable")

// Options configures a Store.
type Options struct {
	// Limits bound what the store keeps; a zero limit is none.
	Limits server.StoreLimits
	// Prefix starts every key ("": DefaultPrefix).
	Prefix string
	// Cooldown is how long the store fails fast after Redis failed (0:
	// DefaultCooldown; negative: never, try Redis every time).
	Cooldown time.Duration
	// WriteRetry is how long a Put tries again after Redis failed, with
	// backoff, before it returns the error (0: DefaultWriteRetry;
	// negative: one attempt, failing fast in a cooldown). A Put's attempts
	// ignore the cooldown: it waits anyway.
	WriteRetry time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Store is a server.Store in Redis. It is safe for concurrent use.
type Store struct {
	client   redis.UniversalClient
	owned    bool // Close closes client
	limits   server.StoreLimits
	prefix   string
	cooldown time.Duration
	retry    time.Duration // WriteRetry; negative: none
	now      func() time.Time
	where    string // the redacted address, for errors

	downUntil atomic.Int64 // unix nanoseconds until which calls fail fast
	downErr   atomic.Pointer[error]
}

// New returns a store on client with opts. It starts nothing and does not
// connect; Close does not close client.
func New(client redis.UniversalClient, opts Options) *Store {
	s := &Store{client: client, limits: opts.Limits, prefix: opts.Prefix, cooldown: opts.Cooldown, retry: opts.WriteRetry,
		now: opts.Now, where: "redis"}
	if s.prefix == "" {
		s.prefix = DefaultPrefix
	}
	if s.cooldown == 0 {
		s.cooldown = DefaultCooldown
	}
	if s.retry == 0 {
		s.retry = DefaultWriteRetry
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Open returns a store on the Redis server of rawURL: redis://, rediss://
// (TLS) or unix:// (a socket path), as go-redis parses it (user and
// password, database number, its query options such as dial_timeout), plus
// these query options of ours:
//
//	max_responses=N   at most N responses (0: no limit)
//	max_bytes=N       at most N bytes of their JSON (0: no limit)
//	ttl=DURATION      keep each response this long (Go duration, e.g. 1h; 0: forever)
//	prefix=P          start every key with P (default "harnessflow:")
//	cooldown=DURATION fail fast this long after Redis failed (default 1s; 0: never)
//	write_retry=DURATION  keep trying a write this long (default 5s; 0: once)
//
// defaults are the limits of the options the URL does not set. Without
// dial_timeout, read_timeout, write_timeout and max_retries it uses
// DefaultDialTimeout, DefaultIOTimeout and DefaultMaxRetries. Open does not
// connect (see Ping); its errors never quote the password.
func Open(rawURL string, defaults server.StoreLimits) (*Store, error) {
	where := server.RedactURL(rawURL)
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("redisstore: URL %q: not a URL", where)
	}
	q := u.Query()
	opts := Options{Limits: defaults}
	take := func(name string) (string, bool) {
		if !q.Has(name) {
			return "", false
		}
		v := q.Get(name)
		q.Del(name)
		return v, true
	}
	if v, ok := take("max_responses"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("redisstore: URL %q: max_responses=%q: want a count (0: no limit)", where, v)
		}
		opts.Limits.MaxResponses = n
	}
	if v, ok := take("max_bytes"); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("redisstore: URL %q: max_bytes=%q: want a byte count (0: no limit)", where, v)
		}
		opts.Limits.MaxBytes = n
	}
	if v, ok := take("ttl"); ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("redisstore: URL %q: ttl=%q: want a duration such as 1h (0: forever)", where, v)
		}
		opts.Limits.TTL = d
	}
	if v, ok := take("prefix"); ok {
		if v == "" {
			return nil, fmt.Errorf("redisstore: URL %q: prefix is empty", where)
		}
		opts.Prefix = v
	}
	if v, ok := take("cooldown"); ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("redisstore: URL %q: cooldown=%q: want a duration such as 1s (0: never)", where, v)
		}
		opts.Cooldown = d
		if d == 0 {
			opts.Cooldown = -1
		}
	}
	if v, ok := take("write_retry"); ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("redisstore: URL %q: write_retry=%q: want a duration such as 5s (0: one attempt)", where, v)
		}
		opts.WriteRetry = d
		if d == 0 {
			opts.WriteRetry = -1
		}
	}
	set := func(name string) bool { return q.Has(name) }
	dial, read, write, retries := set("dial_timeout"), set("read_timeout"), set("write_timeout"), set("max_retries")
	u.RawQuery = q.Encode()
	ro, err := redis.ParseURL(u.String())
	if err != nil {
		// go-redis's messages name options and schemes, not the password.
		return nil, fmt.Errorf("redisstore: URL %q: %w", where, err)
	}
	if !dial {
		ro.DialTimeout = DefaultDialTimeout
	}
	if !read {
		ro.ReadTimeout = DefaultIOTimeout
	}
	if !write {
		ro.WriteTimeout = DefaultIOTimeout
	}
	if !retries {
		ro.MaxRetries = DefaultMaxRetries
	}
	ro.DialerRetries = 1 // one dial per attempt: MaxRetries retries the command
	ro.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	s := New(redis.NewClient(ro), opts)
	s.owned = true
	s.where = where
	return s, nil
}

// Limits returns the store's limits (the proxy names them in the error of a
// reference it does not find).
func (s *Store) Limits() server.StoreLimits { return s.limits }

// String is the store's redacted address and limits, for logs.
func (s *Store) String() string {
	var parts []string
	if s.limits.TTL > 0 {
		parts = append(parts, "ttl "+s.limits.TTL.String())
	}
	if s.limits.MaxResponses > 0 {
		parts = append(parts, fmt.Sprintf("at most %d responses", s.limits.MaxResponses))
	}
	switch b := s.limits.MaxBytes; {
	case b > 0 && b%(1<<20) == 0:
		parts = append(parts, fmt.Sprintf("at most %d MiB", b>>20))
	case b > 0:
		parts = append(parts, fmt.Sprintf("at most %d bytes", b))
	}
	if len(parts) == 0 {
		parts = append(parts, "no limits")
	}
	if s.retry > 0 {
		parts = append(parts, "writes retried for "+s.retry.String())
	}
	return fmt.Sprintf("Redis %s, key prefix %q (%s)", s.where, s.prefix, strings.Join(parts, ", "))
}

// Ping checks that Redis answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.client.Ping(ctx).Err(); err != nil {
		return s.failed(ctx, "ping", err)
	}
	return nil
}

// Close closes the Redis client of a store made by Open.
func (s *Store) Close() error {
	if !s.owned {
		return nil
	}
	if err := s.client.Close(); err != nil {
		return fmt.Errorf("redisstore: close: %w", err)
	}
	return nil
}

// scopeHash is the key part of a credential scope.
func scopeHash(scope string) string {
	sum := sha256.Sum256([]byte("harnessflow response store scope\x00" + scope))
	return hex.EncodeToString(sum[:16])
}

func (s *Store) responseKey(sh, id string) string { return s.prefix + "r:" + sh + ":" + id }
func (s *Store) itemKey(sh, id string) string     { return s.prefix + "i:" + sh + ":" + id }

// record is a response as kept in Redis.
type record struct {
	ID      string            `json:"id"`
	Model   string            `json:"model"`
	Created time.Time         `json:"created"`
	Input   json.RawMessage   `json:"input"`
	Output  []json.RawMessage `json:"output"`
}

// meta is what eviction needs of a response: its size and its item keys
// with the value each had when it was written.
type meta struct {
	Size  int64       `json:"s"`
	Items [][2]string `json:"i"`
}

// available fails fast while the store cools down after a failure.
func (s *Store) available(op string) error {
	until := s.downUntil.Load()
	if until == 0 || s.now().UnixNano() >= until {
		return nil
	}
	cause := "an earlier failure"
	if p := s.downErr.Load(); p != nil {
		cause = (*p).Error()
	}
	return fmt.Errorf("redisstore: %s at %s: %w (failing fast for %s after: %s)", op, s.where, ErrUnavailable, s.cooldown, cause)
}

// failed wraps a Redis error and starts the cooldown. A call the caller
// cancelled is its own error, not an outage.
func (s *Store) failed(ctx context.Context, op string, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return fmt.Errorf("redisstore: %s: %w", op, err)
	}
	if s.cooldown > 0 {
		s.downErr.Store(&err)
		s.downUntil.Store(s.now().Add(s.cooldown).UnixNano())
	}
	return fmt.Errorf("redisstore: %s at %s: %w: %w", op, s.where, ErrUnavailable, err)
}

// recovered ends a cooldown after a call that reached Redis.
func (s *Store) recovered() {
	if s.downUntil.Load() != 0 {
		s.downUntil.Store(0)
	}
}

// putScript keeps one response. KEYS: order, meta, bytes, stats, the
// response key, its item keys. ARGV: record, size, created (ms), expiry
// (ms since the epoch, 0: none), now (ms), TTL (ms, 0: none), max
// responses, max bytes, meta JSON, then the value of each item key. It
// returns 1 when the response was kept, 2 when it had expired already.
var putScript = redis.NewScript(`
local order, meta, bytes, stats, rkey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local size, created, expireAt = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local now, ttl, maxN, maxBytes = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local function remove(r, reason)
  local m = redis.call('HGET', meta, r)
  if m then
    local e = cjson.decode(m)
    redis.call('DECRBY', bytes, e.s)
    for _, it in ipairs(e.i) do
      if redis.call('GET', it[1]) == it[2] then redis.call('DEL', it[1]) end
    end
    redis.call('HDEL', meta, r)
  end
  redis.call('ZREM', order, r)
  redis.call('DEL', r)
  redis.call('HINCRBY', stats, 'evicted_' .. reason, 1)
end
if redis.call('ZSCORE', order, rkey) then remove(rkey, 'replaced') end
if ttl > 0 then
  local old = redis.call('ZRANGEBYSCORE', order, '-inf', '(' .. (now - ttl), 'LIMIT', 0, 1000)
  for _, r in ipairs(old) do remove(r, 'ttl') end
end
redis.call('HINCRBY', stats, 'puts', 1)
if expireAt > 0 and expireAt <= now then
  redis.call('HINCRBY', stats, 'evicted_ttl', 1)
  return 2
end
if expireAt > 0 then
  redis.call('SET', rkey, ARGV[1], 'PXAT', expireAt)
else
  redis.call('SET', rkey, ARGV[1])
end
for i = 6, #KEYS do
  if expireAt > 0 then
    redis.call('SET', KEYS[i], ARGV[4 + i], 'PXAT', expireAt)
  else
    redis.call('SET', KEYS[i], ARGV[4 + i])
  end
end
redis.call('ZADD', order, created, rkey)
redis.call('HSET', meta, rkey, ARGV[9])
redis.call('INCRBY', bytes, size)
while true do
  local n = redis.call('ZCARD', order)
  if n == 0 then break end
  local reason = nil
  if maxN > 0 and n > maxN then
    reason = 'count'
  elseif maxBytes > 0 and tonumber(redis.call('GET', bytes) or '0') > maxBytes then
    reason = 'bytes'
  end
  if not reason then break end
  remove(redis.call('ZRANGE', order, 0, 0)[1], reason)
end
return 1
`)

// getItemScript returns the index and the record of the response holding
// item key KEYS[1], or nil.
var getItemScript = redis.NewScript(`
local ref = redis.call('GET', KEYS[1])
if not ref then return false end
local nl = string.find(ref, '\n', 1, true)
if not nl then return false end
local rec = redis.call('GET', string.sub(ref, nl + 1))
if not rec then return false end
return {string.sub(ref, 1, nl - 1), rec}
`)

// Put keeps r under scope, replacing a response of the same id. A
// response whose JSON alone is over MaxBytes is not kept (an error wrapping
// server.ErrNotStored says so).
func (s *Store) Put(ctx context.Context, scope string, r *server.StoredResponse) error {
	if r == nil || r.ID == "" {
		return errors.New("redisstore: put: a response without id")
	}
	rec := record{ID: r.ID, Model: r.Model, Created: r.CreatedAt}
	if rec.Created.IsZero() {
		rec.Created = s.now()
	}
	// Encoded as the in-memory store encodes, with its size, so that a limit
	// means the same.
	enc, err := server.EncodeStoredResponse(scope, r)
	if err != nil {
		return fmt.Errorf("redisstore: %w", err)
	}
	rec.Input, rec.Output = enc.Input, enc.Output
	size := enc.Size
	sh := scopeHash(scope)
	rkey := s.responseKey(sh, r.ID)
	keys := []string{s.prefix + "order", s.prefix + "meta", s.prefix + "bytes", s.prefix + "stats", rkey}
	var m meta
	var refs []any
	for i, id := range enc.ItemIDs {
		if id == "" {
			continue
		}
		ik, ref := s.itemKey(sh, id), strconv.Itoa(i)+"\n"+rkey
		keys = append(keys, ik)
		refs = append(refs, ref)
		m.Items = append(m.Items, [2]string{ik, ref})
	}
	if s.limits.MaxBytes > 0 && size > s.limits.MaxBytes {
		if s.available("put") == nil {
			_ = s.client.HIncrBy(ctx, s.prefix+"stats", "too_large", 1).Err() // only a counter
		}
		return fmt.Errorf("redisstore: response %s is %d bytes, over the store's %d: %w", r.ID, size, s.limits.MaxBytes, server.ErrNotStored)
	}
	m.Size = size
	if m.Items == nil {
		m.Items = [][2]string{}
	}
	recJSON, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("redisstore: put %s: %w", r.ID, err)
	}
	metaJSON, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("redisstore: put %s: %w", r.ID, err)
	}
	var expireAt int64
	if s.limits.TTL > 0 {
		expireAt = rec.Created.Add(s.limits.TTL).UnixMilli()
	}
	args := append([]any{recJSON, size, rec.Created.UnixMilli(), expireAt, s.now().UnixMilli(),
		s.limits.TTL.Milliseconds(), s.limits.MaxResponses, s.limits.MaxBytes, metaJSON}, refs...)
	if s.retry < 0 {
		if err := s.available("put"); err != nil {
			return err
		}
	}
	start := time.Now()
	give := start.Add(s.retry)
	backoff := retryFirstBackoff
	for attempt := 1; ; attempt++ {
		err := putScript.Run(ctx, s.client, keys, args...).Err()
		if err == nil {
			s.recovered()
			return nil
		}
		err = s.failed(ctx, "put "+r.ID, err)
		wait := min(backoff, time.Until(give))
		if s.retry < 0 || !errors.Is(err, ErrUnavailable) || wait <= 0 {
			if attempt > 1 {
				return fmt.Errorf("%w (after %d attempts in %s)", err, attempt, time.Since(start).Round(time.Millisecond))
			}
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("redisstore: put %s: %w (after %d attempts: %w)", r.ID, ctx.Err(), attempt, err)
		case <-t.C:
		}
		backoff = min(2*backoff, retryMaxBackoff)
	}
}

// Get returns the response with id kept under scope.
func (s *Store) Get(ctx context.Context, scope, id string) (*server.StoredResponse, error) {
	if err := s.available("get"); err != nil {
		return nil, err
	}
	data, err := s.client.Get(ctx, s.responseKey(scopeHash(scope), id)).Bytes()
	if errors.Is(err, redis.Nil) {
		s.recovered()
		return nil, fmt.Errorf("redisstore: response %q: %w", id, server.ErrNotStored)
	}
	if err != nil {
		return nil, s.failed(ctx, "get "+id, err)
	}
	s.recovered()
	var rec record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("redisstore: response %q: %w", id, err)
	}
	r, err := server.DecodeStoredResponse(rec.ID, rec.Model, rec.Created, rec.Input, rec.Output)
	if err != nil {
		return nil, fmt.Errorf("redisstore: response %q: %w", id, err)
	}
	return r, nil
}

// GetItem returns the output item with id of a response kept under scope.
func (s *Store) GetItem(ctx context.Context, scope, id string) (protocol.ResponseItem, error) {
	if err := s.available("get item"); err != nil {
		return nil, err
	}
	res, err := getItemScript.Run(ctx, s.client, []string{s.itemKey(scopeHash(scope), id)}).StringSlice()
	if errors.Is(err, redis.Nil) {
		s.recovered()
		return nil, fmt.Errorf("redisstore: item %q: %w", id, server.ErrNotStored)
	}
	if err != nil {
		return nil, s.failed(ctx, "get item "+id, err)
	}
	s.recovered()
	if len(res) != 2 {
		return nil, fmt.Errorf("redisstore: item %q: the script answered %d values", id, len(res))
	}
	index, err := strconv.Atoi(res[0])
	if err != nil {
		return nil, fmt.Errorf("redisstore: item %q: index %q: %w", id, res[0], err)
	}
	var rec record
	if err := json.Unmarshal([]byte(res[1]), &rec); err != nil {
		return nil, fmt.Errorf("redisstore: item %q: %w", id, err)
	}
	if index < 0 || index >= len(rec.Output) {
		return nil, fmt.Errorf("redisstore: item %q: %w", id, server.ErrNotStored)
	}
	it, err := protocol.UnmarshalItem(rec.Output[index])
	if err != nil {
		return nil, fmt.Errorf("redisstore: item %q: %w", id, err)
	}
	return it, nil
}

// Stats returns what the store holds under its prefix and its counters
// (of every replica using the same Redis and prefix).
func (s *Store) Stats(ctx context.Context) (server.StoreStats, error) {
	if err := s.available("stats"); err != nil {
		return server.StoreStats{}, err
	}
	pipe := s.client.Pipeline()
	n := pipe.ZCard(ctx, s.prefix+"order")
	b := pipe.Get(ctx, s.prefix+"bytes")
	st := pipe.HGetAll(ctx, s.prefix+"stats")
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return server.StoreStats{}, s.failed(ctx, "stats", err)
	}
	s.recovered()
	out := server.StoreStats{Responses: int(n.Val()), Evicted: map[string]uint64{}}
	out.Bytes, _ = strconv.ParseInt(b.Val(), 10, 64) // absent: 0
	for k, v := range st.Val() {
		c, _ := strconv.ParseUint(v, 10, 64)
		switch {
		case k == "puts":
			out.Puts = c
		case k == "too_large":
			out.TooLarge = c
		case strings.HasPrefix(k, "evicted_"):
			out.Evicted[strings.TrimPrefix(k, "evicted_")] = c
		}
	}
	return out, nil
}

var _ server.Store = (*Store)(nil)
