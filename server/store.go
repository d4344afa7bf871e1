package server

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/harnessflow/harnessflow/protocol"
)

// Defaults of the in-memory response store (Config.StoreMaxResponses,
// Config.StoreMaxBytes, Config.StoreTTL).
const (
	DefaultStoreMaxResponses = 10000
	DefaultStoreMaxBytes     = 256 << 20
	DefaultStoreTTL          = time.Hour
)

// ErrNotStored is what a Store returns for a response or item it does not
// hold (never kept, expired, evicted, or kept for another credential).
var ErrNotStored = errors.New("not stored")

// StoredResponse is what the proxy keeps of a response, so that a later
// request can continue from it (previous_response_id) or refer to its items
// (item_reference).
type StoredResponse struct {
	// ID is the response id the client got.
	ID string
	// Model is the model the response was asked of.
	Model string
	// CreatedAt is when the response was made.
	CreatedAt time.Time
	// Input is the conversation the response answered, whole: the input
	// of its request with its previous response and item references
	// resolved.
	Input protocol.Items
	// Output is the response's output items as the client received them
	// (with their ids).
	Output protocol.Items
}

// Store keeps responses for previous_response_id and item_reference. Every
// call names the scope of the caller's credential (see CredentialScope):
// a response is found only under the scope it was put with. A Store
// shared by several proxies (an external one) lets a conversation move
// between replicas. Implementations must be safe for concurrent use.
type Store interface {
	// Put keeps r under scope (replacing a response of the same id). It
	// runs before the response's terminal event, so it may retry a failed
	// write for a while (until ctx ends). An error wrapping ErrNotStored
	// means it will not keep r (the response completes with "store":
	// false); any other error means it could not (the response ends with
	// response.failed, store_unavailable, and the store counts as down —
	// store_health.go).
	Put(ctx context.Context, scope string, r *StoredResponse) error
	// Get returns the response with id kept under scope, or an error
	// wrapping ErrNotStored.
	Get(ctx context.Context, scope, id string) (*StoredResponse, error)
	// GetItem returns the output item with id of a response kept under
	// scope, or an error wrapping ErrNotStored.
	GetItem(ctx context.Context, scope, id string) (protocol.ResponseItem, error)
}

// StoreLimits describes how long and how much a Store keeps, for the error
// a client gets when a reference is not found.
type StoreLimits struct {
	// MaxResponses, MaxBytes and TTL are the limits; zero is no limit.
	MaxResponses int
	MaxBytes     int64
	TTL          time.Duration
}

// StoreStats is the state of a MemoryStore, for /metrics.
type StoreStats struct {
	// Responses and Bytes are what it holds now.
	Responses int
	Bytes     int64
	// Puts counts the responses kept; TooLarge those refused for being
	// over MaxBytes alone.
	Puts, TooLarge uint64
	// Evicted counts the responses dropped, by reason: "ttl", "count",
	// "bytes", "replaced".
	Evicted map[string]uint64
}

// CredentialScope returns the store scope of a request's credential: a
// SHA-256 hash of its Authorization and x-api-key headers (never the key
// itself), "" for a request with neither.
func CredentialScope(h http.Header) string {
	auth, key := h.Get("Authorization"), h.Get("x-api-key")
	if auth == "" && key == "" {
		return ""
	}
	sum := sha256.Sum256([]byte("authorization\x00" + auth + "\x00x-api-key\x00" + key))
	return hex.EncodeToString(sum[:])
}

// MemoryStore is the in-memory Store: bounded by count, bytes (of the
// responses' JSON) and age. When a Put goes over a bound the oldest
// responses are dropped; a response older than the TTL is not found and is
// dropped at the next Put. It starts no goroutine.
type MemoryStore struct {
	limits StoreLimits
	now    func() time.Time

	mu      sync.Mutex
	order   *list.List               // *memEntry, oldest first
	byID    map[string]*list.Element // scope + "\x00" + response id
	byItem  map[string]itemRef       // scope + "\x00" + item id
	bytes   int64
	puts    uint64
	tooBig  uint64
	evicted map[string]uint64
}

// memEntry is one kept response, in its JSON form.
type memEntry struct {
	key, scope, id string
	model          string
	created        time.Time
	input          []byte            // JSON array
	output         []json.RawMessage // JSON of each output item
	itemIDs        []string
	size           int64
}

// itemRef locates an output item: its response and index.
type itemRef struct {
	elem  *list.Element
	index int
}

// NewMemoryStore returns an empty MemoryStore with limits (a zero limit is
// none) and the clock now (nil: time.Now).
func NewMemoryStore(limits StoreLimits, now func() time.Time) *MemoryStore {
	if now == nil {
		now = time.Now
	}
	return &MemoryStore{limits: limits, now: now, order: list.New(), byID: map[string]*list.Element{},
		byItem: map[string]itemRef{}, evicted: map[string]uint64{}}
}

// Limits returns the store's limits.
func (m *MemoryStore) Limits() StoreLimits { return m.limits }

func scopedKey(scope, id string) string { return scope + "\x00" + id }

// EncodedResponse is a StoredResponse in the JSON form a Store keeps.
type EncodedResponse struct {
	Input   []byte            // the JSON array of the input items
	Output  []json.RawMessage // the JSON of each output item
	ItemIDs []string          // each output item's id ("" when it has none)
	// Size is what StoreLimits.MaxBytes counts: the JSON above, the item
	// ids, the scope, the response id and the model, plus one byte. Every
	// Store counts it so, so that a limit means the same in each.
	Size int64
}

// EncodeStoredResponse encodes r, to be kept under scope. Its errors read
// "put ID: input: …" or "put ID: output item N: …"; the caller prefixes
// its store's name.
func EncodeStoredResponse(scope string, r *StoredResponse) (EncodedResponse, error) {
	var enc EncodedResponse
	var err error
	if enc.Input, err = json.Marshal(r.Input); err != nil {
		return EncodedResponse{}, fmt.Errorf("put %s: input: %w", r.ID, err)
	}
	enc.Size = int64(len(enc.Input) + len(scope) + 1 + len(r.ID) + len(r.Model))
	for i, it := range r.Output {
		b, err := protocol.MarshalItem(it)
		if err != nil {
			return EncodedResponse{}, fmt.Errorf("put %s: output item %d: %w", r.ID, i, err)
		}
		enc.Output = append(enc.Output, b)
		id := protocol.ItemID(it)
		enc.ItemIDs = append(enc.ItemIDs, id)
		enc.Size += int64(len(b) + len(id))
	}
	return enc, nil
}

// DecodeStoredResponse rebuilds a StoredResponse from what
// EncodeStoredResponse made of it. Its errors read "input: …" or "output
// item N: …"; the caller prefixes its store's name and the response id.
func DecodeStoredResponse(id, model string, created time.Time, input []byte, output []json.RawMessage) (*StoredResponse, error) {
	r := &StoredResponse{ID: id, Model: model, CreatedAt: created}
	if err := json.Unmarshal(input, &r.Input); err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	for i, b := range output {
		it, err := protocol.UnmarshalItem(b)
		if err != nil {
			return nil, fmt.Errorf("output item %d: %w", i, err)
		}
		r.Output = append(r.Output, it)
	}
	return r, nil
}

// Put keeps r under scope. A response whose JSON alone is over MaxBytes is
// not kept (an error wrapping ErrNotStored says so).
func (m *MemoryStore) Put(_ context.Context, scope string, r *StoredResponse) error {
	if r == nil || r.ID == "" {
		return errors.New("store: put: a response without id")
	}
	e := &memEntry{key: scopedKey(scope, r.ID), scope: scope, id: r.ID, model: r.Model, created: r.CreatedAt}
	enc, err := EncodeStoredResponse(scope, r)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	e.input, e.output, e.itemIDs, e.size = enc.Input, enc.Output, enc.ItemIDs, enc.Size
	if e.created.IsZero() {
		e.created = m.now()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.limits.MaxBytes > 0 && e.size > m.limits.MaxBytes {
		m.tooBig++
		return fmt.Errorf("store: response %s is %d bytes, over the store's %d: %w", r.ID, e.size, m.limits.MaxBytes, ErrNotStored)
	}
	if old, ok := m.byID[e.key]; ok {
		m.remove(old, "replaced")
	}
	elem := m.order.PushBack(e)
	m.byID[e.key] = elem
	for i, id := range e.itemIDs {
		if id != "" {
			m.byItem[scopedKey(scope, id)] = itemRef{elem: elem, index: i}
		}
	}
	m.bytes += e.size
	m.puts++
	m.evict()
	return nil
}

// evict drops the expired responses and, while over a limit, the oldest.
func (m *MemoryStore) evict() {
	now := m.now()
	for front := m.order.Front(); front != nil; front = m.order.Front() {
		e := front.Value.(*memEntry)
		switch {
		case m.expired(e, now):
			m.remove(front, "ttl")
		case m.limits.MaxResponses > 0 && m.order.Len() > m.limits.MaxResponses:
			m.remove(front, "count")
		case m.limits.MaxBytes > 0 && m.bytes > m.limits.MaxBytes:
			m.remove(front, "bytes")
		default:
			return
		}
	}
}

func (m *MemoryStore) expired(e *memEntry, now time.Time) bool {
	return m.limits.TTL > 0 && now.Sub(e.created) > m.limits.TTL
}

func (m *MemoryStore) remove(elem *list.Element, reason string) {
	e := elem.Value.(*memEntry)
	m.order.Remove(elem)
	delete(m.byID, e.key)
	for _, id := range e.itemIDs {
		k := scopedKey(e.scope, id)
		if ref, ok := m.byItem[k]; ok && ref.elem == elem {
			delete(m.byItem, k)
		}
	}
	m.bytes -= e.size
	m.evicted[reason]++
}

// Get returns the response with id kept under scope.
func (m *MemoryStore) Get(_ context.Context, scope, id string) (*StoredResponse, error) {
	m.mu.Lock()
	elem, ok := m.byID[scopedKey(scope, id)]
	var e *memEntry
	if ok {
		e = elem.Value.(*memEntry)
		if m.expired(e, m.now()) {
			ok = false
		}
	}
	m.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("store: response %q: %w", id, ErrNotStored)
	}
	r, err := DecodeStoredResponse(e.id, e.model, e.created, e.input, e.output)
	if err != nil {
		return nil, fmt.Errorf("store: response %q: %w", id, err)
	}
	return r, nil
}

// GetItem returns the output item with id of a response kept under scope.
func (m *MemoryStore) GetItem(_ context.Context, scope, id string) (protocol.ResponseItem, error) {
	m.mu.Lock()
	ref, ok := m.byItem[scopedKey(scope, id)]
	var data []byte
	if ok {
		e := ref.elem.Value.(*memEntry)
		if m.expired(e, m.now()) {
			ok = false
		} else {
			data = e.output[ref.index]
		}
	}
	m.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("store: item %q: %w", id, ErrNotStored)
	}
	it, err := protocol.UnmarshalItem(data)
	if err != nil {
		return nil, fmt.Errorf("store: item %q: %w", id, err)
	}
	return it, nil
}

// Stats returns the store's state and counters.
func (m *MemoryStore) Stats() StoreStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	ev := make(map[string]uint64, len(m.evicted))
	for k, v := range m.evicted {
		ev[k] = v
	}
	return StoreStats{Responses: m.order.Len(), Bytes: m.bytes, Puts: m.puts, TooLarge: m.tooBig, Evicted: ev}
}
