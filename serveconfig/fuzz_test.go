package serveconfig

import (
	"os"
	"testing"
)

// Parse never panics, and a file it accepts routes every model it lists.
func FuzzParse(f *testing.F) {
	good, err := os.ReadFile("testdata/serve.toml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(base))
	f.Add([]byte("[upstreams.a]\nbase_url = \"http://h\"\nheaders = { x = { y = 1 } }\n[[models]]\nname = \"*\"\nupstreams = [\"a\"]\n"))
	f.Add([]byte("a.b.c = 1\n[x.\"y.z\"]\n[[models]]\n[[models.q]]\n"))
	env := testEnv()
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "fuzz.toml", env)
		if err != nil {
			return
		}
		for _, m := range c.Models {
			if r, err := c.Route(m.Name); err != nil || len(r.Attempts) == 0 {
				t.Errorf("model %q of an accepted file: %v, %d attempts", m.Name, err, len(r.Attempts))
			}
		}
	})
}
