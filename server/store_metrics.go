package server

import (
	"maps"
	"sync"

	"github.com/harnessflow/harnessflow/internal/promtext"
)

// storeMetrics counts the proxy's use of its response store, for /metrics.
// The zero value is ready.
type storeMetrics struct {
	mu       sync.Mutex
	lookups  map[[2]string]uint64 // (kind, result)
	puts     map[string]uint64    // "ok" | "error" | "refused" | "cancelled" (putResult)
	notKept  map[string]uint64    // responses expected kept that were not, by unstored* reason
	refusals uint64               // requests answered 503 up front: the store was down
}

const resultOK = "ok"

func (m *storeMetrics) lookup(kind, result string) {
	bump(&m.mu, &m.lookups, [2]string{kind, result})
}

func (m *storeMetrics) put(result string) {
	bump(&m.mu, &m.puts, result)
}

func (m *storeMetrics) unstored(reason string) {
	bump(&m.mu, &m.notKept, reason)
}

func (m *storeMetrics) refused() {
	m.mu.Lock()
	m.refusals++
	m.mu.Unlock()
}

// bump adds one to (*counts)[k] under mu, making the map on first use.
func bump[K comparable](mu *sync.Mutex, counts *map[K]uint64, k K) {
	mu.Lock()
	if *counts == nil {
		*counts = map[K]uint64{}
	}
	(*counts)[k]++
	mu.Unlock()
}

// okOr is a result label: "ok", or failed when !ok.
func okOr(ok bool, failed string) string {
	if ok {
		return "ok"
	}
	return failed
}

// collect writes the store's families: lookups by kind and result,
// puts by result and, for a MemoryStore, what it holds and what it
// dropped.
func (m *storeMetrics) collect(pw *promtext.Writer, store Store, healthy bool) {
	m.mu.Lock()
	lookups, puts, unstored, refusals := maps.Clone(m.lookups), maps.Clone(m.puts), maps.Clone(m.notKept), m.refusals
	m.mu.Unlock()
	pw.Counter("harnessflow_store_lookups_total", "Response store lookups (previous_response_id, item_reference), by result.")
	for _, k := range promtext.SortedPairs(lookups) {
		pw.Sample("harnessflow_store_lookups_total", lookups[k], "kind", k[0], "result", k[1])
	}
	pw.CounterMap("harnessflow_store_puts_total", "Responses handed to the response store, by result.", "result", puts)
	if store != nil {
		pw.Counter("harnessflow_store_unstored_total", "Responses whose request expected them kept that were not, by reason "+
			"(store_unavailable: the client got response.failed or HTTP 503; refused: over the store's limit, completed with store false; "+
			"cancelled: the request ended first).")
		for _, reason := range []string{unstoredUnavailable, unstoredRefused, unstoredCancelled} {
			pw.Sample("harnessflow_store_unstored_total", unstored[reason], "reason", reason)
		}
		pw.Counter("harnessflow_store_refused_total", "Requests answered HTTP 503 store_unavailable before they started, the store being down.")
		pw.Sample("harnessflow_store_refused_total", refusals)
		var up uint64
		if healthy {
			up = 1
		}
		pw.Gauge("harnessflow_store_up", "Whether the response store is not known to be down (0 after a failed call, until a call reaches it).")
		pw.Sample("harnessflow_store_up", up)
	}
	if ms, ok := store.(*MemoryStore); ok {
		st := ms.Stats()
		pw.Gauge("harnessflow_store_responses", "Responses held in the in-memory response store.")
		pw.Sample("harnessflow_store_responses", uint64(st.Responses))
		pw.Gauge("harnessflow_store_bytes", "Bytes (JSON) held in the in-memory response store.")
		pw.Sample("harnessflow_store_bytes", uint64(st.Bytes))
		pw.CounterMap("harnessflow_store_evictions_total", "Responses the in-memory response store dropped, by reason.", "reason", st.Evicted)
		pw.Counter("harnessflow_store_too_large_total", "Responses not kept for being over the store's byte limit alone.")
		pw.Sample("harnessflow_store_too_large_total", uint64(st.TooLarge))
	}
}
