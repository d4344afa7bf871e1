package serveconfig

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestHolderLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "serve.toml")
	first := "[upstreams.a]\nbase_url = \"http://a.example/v1\"\n[[models]]\nname = \"m\"\nupstreams = [\"a\"]\n"
	second := "[upstreams.b]\nbase_url = \"http://b.example/v1\"\n[[models]]\nname = \"m\"\nupstreams = [\"b\"]\nupstream_model = \"m2\"\n"
	broken := "[upstreams.b]\nbase_url = \"http://b.example/v1\"\n[[models]]\nname = \"m\"\nupstreams = [\"c\"]\n"

	h := NewHolder(nil, testEnv())
	if h.Config() != nil {
		t.Fatal("a new holder of nil holds a config")
	}
	writeFile(t, path, first)
	c1, err := h.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if h.Config() != c1 || c1.File != path {
		t.Fatalf("Config() = %p, want the loaded %p", h.Config(), c1)
	}
	route := func() string {
		r, err := h.Config().Route("m")
		if err != nil {
			t.Fatal(err)
		}
		return r.Attempts[0].Upstream.Name + "/" + r.Attempts[0].Model
	}
	for _, step := range []struct {
		name, text string
		wantErr    string
		want       string
	}{
		{"a valid file replaces the config", second, "", "b/m2"},
		{"a broken file keeps the old one", broken, `unknown upstream "c"`, "b/m2"},
		{"an unreadable file keeps the old one", "", "no such file", "b/m2"},
		{"the first file again", first, "", "a/m"},
	} {
		p := path
		if step.text == "" {
			p = filepath.Join(dir, "missing.toml")
		} else {
			writeFile(t, path, step.text)
		}
		before := h.Config()
		c, err := h.Load(p)
		switch {
		case step.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), step.wantErr) || c != nil || h.Config() != before {
				t.Errorf("%s: Load = %p, %v; want the error %q and the old config kept", step.name, c, err, step.wantErr)
			}
		case err != nil || c != h.Config():
			t.Errorf("%s: Load = %p, %v", step.name, c, err)
		}
		if got := route(); got != step.want {
			t.Errorf("%s: m routes to %s, want %s", step.name, got, step.want)
		}
	}
}

// Readers that took a config keep it across reloads, and never see a
// config that failed validation, while files are loaded concurrently.
func TestHolderConcurrentReload(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.toml")
	bad := filepath.Join(dir, "bad.toml")
	writeFile(t, good, "[upstreams.a]\nbase_url = \"http://a.example/v1\"\n[[models]]\nname = \"m\"\nupstreams = [\"a\"]\n")
	writeFile(t, bad, "[upstreams.a]\nbase_url = \"gopher://a\"\n[[models]]\nname = \"m\"\nupstreams = [\"a\"]\n")
	c0, err := Load(good, testEnv())
	if err != nil {
		t.Fatal(err)
	}
	h := NewHolder(c0, testEnv())
	var wg, loaders sync.WaitGroup
	var loads, refused atomic.Int64
	stop := make(chan struct{})
	for i := range 2 {
		loaders.Go(func() {
			for j := 0; j < 50; j++ {
				p := good
				if (i+j)%2 == 1 {
					p = bad
				}
				if _, err := h.Load(p); err != nil {
					refused.Add(1)
				} else {
					loads.Add(1)
				}
			}
		})
	}
	var readerErrs atomic.Int64
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				c := h.Config()
				r, err := c.Route("m")
				// The config taken stays whole whatever is loaded meanwhile.
				if err != nil || r.Attempts[0].Upstream != c.Upstream("a") || c.Upstream("a").BaseURL != "http://a.example/v1" {
					readerErrs.Add(1)
				}
			}
		})
	}
	loaders.Wait()
	close(stop)
	wg.Wait()
	if readerErrs.Load() > 0 || loads.Load() != 50 || refused.Load() != 50 {
		t.Errorf("reader errors %d, loads %d, refused %d; want 0, 50, 50", readerErrs.Load(), loads.Load(), refused.Load())
	}
}

func TestRestartNeeded(t *testing.T) {
	a := &Config{Listen: []string{"127.0.0.1:1"}, Store: "memory", ClientKeys: []string{"k"}}
	for _, tt := range []struct {
		name string
		edit func(c *Config)
		want []string
	}{
		{"nothing", func(*Config) {}, nil},
		{"routing only", func(c *Config) { c.Models = []*Model{{Name: "x"}}; c.DefaultModel = "x" }, nil},
		{"listen and store", func(c *Config) { c.Listen = []string{"127.0.0.1:2"}; c.Store = "none" }, []string{"listen", "store"}},
		{"keys and grace (keys are applied at once)", func(c *Config) { c.ClientKeys = nil; c.ShutdownGrace = 1 }, []string{"timeouts.shutdown_grace"}},
	} {
		b := *a
		tt.edit(&b)
		if got := RestartNeeded(a, &b); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestKeyFilesRelativeToTheConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "secrets"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "secrets", "up.key"), "  upstream-key-1  \n")
	writeFile(t, filepath.Join(dir, "secrets", "clients"), "# one per line\nclient-key-aaaaaaaaaaaa\nclient-key-bbbbbbbbbbbb, client-key-cccccccccccc\n")
	path := filepath.Join(dir, "serve.toml")
	writeFile(t, path, "[client_keys]\nfile = \"secrets/clients\"\n[upstreams.a]\nbase_url = \"http://a/v1\"\napi_key_file = \"secrets/up.key\"\n"+
		"[[models]]\nname = \"m\"\nupstreams = [\"a\"]\n")
	c, err := Load(path, testEnv())
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Upstream("a").APIKey; got != "upstream-key-1" {
		t.Errorf("APIKey %q", got)
	}
	if want := []string{"client-key-aaaaaaaaaaaa", "client-key-bbbbbbbbbbbb", "client-key-cccccccccccc"}; !slices.Equal(c.ClientKeys, want) {
		t.Errorf("ClientKeys %q, want %q", c.ClientKeys, want)
	}
}
