package server

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/serveconfig"
)

// A reload that would give a server on a public address an upstream key
// without client keys is refused; on loopback, or with client keys, it is
// taken.
func TestReloadRefusesAnOpenRelay(t *testing.T) {
	t.Setenv("HF_RELOAD_TEST_KEY", "sk-reload-test-key")
	dir := t.TempDir()
	keyless := filepath.Join(dir, "keyless.toml")
	keyed := filepath.Join(dir, "keyed.toml")
	for path, text := range map[string]string{
		keyless: "[upstreams.a]\nbase_url = \"http://127.0.0.1:1/v1\"\n[[models]]\nname = \"m\"\nupstreams = [\"a\"]\n",
		keyed:   "[upstreams.a]\nbase_url = \"http://127.0.0.1:1/v1\"\napi_key_env = \"HF_RELOAD_TEST_KEY\"\n[[models]]\nname = \"m\"\nupstreams = [\"a\"]\n",
	} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name       string
		exposed    bool
		clientKeys []string
		refused    bool
	}{
		{"loopback", false, nil, false},
		{"public without client keys", true, nil, true},
		{"public with client keys", true, []string{"client-key-0123456789"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := serveconfig.Load(keyless, serveconfig.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s := New(Config{Routes: serveconfig.NewHolder(c, serveconfig.Options{}), ClientKeys: tt.clientKeys,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			s.exposed.Store(tt.exposed)
			_, err = s.Reload(keyed)
			if tt.refused {
				if err == nil || !strings.Contains(err.Error(), `upstream "a" has a key of its own`) || s.cfg.Routes.Config() != c {
					t.Errorf("Reload = %v; want it refused and the keyless config kept", err)
				}
				return
			}
			if err != nil || s.cfg.Routes.Config().Upstream("a").APIKey == "" {
				t.Errorf("Reload = %v; want the keyed config taken", err)
			}
		})
	}
}
