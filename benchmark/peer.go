package benchmark

import (
	"fmt"
	"slices"
	"sync"
)

// Peer is another implementation that turns the same bytes into the same
// result — an official SDK's stream decoder and accumulator — measured in
// the same run as our graph, on the same corpus.
type Peer struct {
	// Name is the short name ("openai-go").
	Name string
	// Description says what runs ("ssestream + ChatCompletionAccumulator").
	Description string
	// Reasoning says whether the peer surfaces the reasoning text, so that
	// it is compared with ours.
	Reasoning bool
	// Run turns one corpus input into its result.
	Run func(input []byte) (*Summary, error)
}

// KnownPeers names the peers of package benchmark/sdkpeer, which a binary
// links only when it imports that package (the harnessflow command: when
// built with -tags peers).
var KnownPeers = []string{"openai-go", "anthropic-sdk-go"}

// peers is the registry of the peers linked into this binary, by wire.
var peers struct {
	sync.RWMutex
	byWire map[string]Peer
}

// RegisterPeer makes p the peer of an upstream wire for PeerFor and
// PeerByName. Package benchmark/sdkpeer registers the official SDKs' when it
// is imported.
func RegisterPeer(wire string, p Peer) {
	peers.Lock()
	defer peers.Unlock()
	if peers.byWire == nil {
		peers.byWire = map[string]Peer{}
	}
	peers.byWire[wire] = p
}

// PeerFor returns the registered peer of an upstream wire: openai-go for
// "chat", anthropic-sdk-go for "messages" once benchmark/sdkpeer is
// imported. The responses wire has none (the SDK has no stream accumulator
// for it).
func PeerFor(wire string) (Peer, bool) {
	peers.RLock()
	defer peers.RUnlock()
	p, ok := peers.byWire[wire]
	return p, ok
}

// PeerByName returns the registered peer called name ("openai-go" or
// "anthropic-sdk-go"). A known peer that this binary does not link is an
// error that says how to get it.
func PeerByName(name string) (Peer, error) {
	peers.RLock()
	defer peers.RUnlock()
	return peerByName(peers.byWire, name)
}

// peerByName looks name up among the peers of byWire.
func peerByName(byWire map[string]Peer, name string) (Peer, error) {
	for _, p := range byWire {
		if p.Name == name {
			return p, nil
		}
	}
	if slices.Contains(KnownPeers, name) {
		return Peer{}, fmt.Errorf("benchmark: peer %s is not linked into this binary: the product build leaves the official SDKs out; "+
			"build with `go build -tags peers ./cmd/harnessflow` (or use `go run -tags peers ./cmd/harnessflow bench ...`)", name)
	}
	return Peer{}, fmt.Errorf("benchmark: unknown peer %q (want openai-go or anthropic-sdk-go)", name)
}
