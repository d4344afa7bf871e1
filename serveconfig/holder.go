package serveconfig

import (
	"slices"
	"sync"
	"sync/atomic"
)

// Holder keeps the configuration a running server uses. Readers take the
// current one with Config and keep using what they took (a stream in
// flight finishes on the configuration it started with); Load replaces it
// only with a file that validated. It is safe for concurrent use.
type Holder struct {
	cur  atomic.Pointer[Config]
	opts Options
	mu   sync.Mutex // one Load at a time
}

// NewHolder returns a holder of c (which may be nil until the first Load),
// loading later files with opts.
func NewHolder(c *Config, opts Options) *Holder {
	h := &Holder{opts: opts}
	h.cur.Store(c)
	return h
}

// Config returns the current configuration.
func (h *Holder) Config() *Config { return h.cur.Load() }

// Load reads and validates the file at path and, when it is valid, makes it
// the current configuration and returns it. A file that does not validate
// leaves the current configuration in place and returns the error.
func (h *Holder) Load(path string) (*Config, error) { return h.LoadChecked(path, nil) }

// LoadChecked is Load with a check of the caller's (nil: none) that the
// new configuration must pass too, before it replaces the current one:
// settings the file validates alone, the caller's running state does not
// allow (a server on a public address and a key without client keys).
func (h *Holder) LoadChecked(path string, check func(next *Config) error) (*Config, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := Load(path, h.opts)
	if err != nil {
		return nil, err
	}
	if check != nil {
		if err := check(c); err != nil {
			return nil, err
		}
	}
	h.cur.Store(c)
	return c, nil
}

// RestartNeeded lists the settings that differ between old and next and
// that a running server does not change: the listen addresses, the store,
// the shutdown grace and insecure_open_relay (client keys are applied
// at once: server.Server.Reload). A reload
// keeps their old values (the caller says so).
func RestartNeeded(old, next *Config) []string {
	if old == nil || next == nil {
		return nil
	}
	var diff []string
	if !slices.Equal(old.Listen, next.Listen) {
		diff = append(diff, "listen")
	}
	if old.Store != next.Store {
		diff = append(diff, "store")
	}
	if old.ShutdownGrace != next.ShutdownGrace {
		diff = append(diff, "timeouts.shutdown_grace")
	}
	if old.InsecureOpenRelay != next.InsecureOpenRelay {
		diff = append(diff, "insecure_open_relay")
	}
	return diff
}
