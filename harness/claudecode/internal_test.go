package claudecode

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

func TestNormalizeEdit(t *testing.T) {
	for in, want := range map[string]string{
		`{"file_path":"a","old_string":"x","new_string":"y  \n\tz\t \n"}`:        `{"file_path":"a","old_string":"x","new_string":"y\n\tz\n","replace_all":false}`,
		`{"replace_all":true,"file_path":"a","old_string":"x","new_string":"y"}`: `{"replace_all":true,"file_path":"a","old_string":"x","new_string":"y"}`,
		`{"file_path":"a","new_string":5}`:                                       `{"file_path":"a","new_string":5,"replace_all":false}`,
		`not json`:                                                               `not json`,
		`["a"]`:                                                                  `["a"]`,
		`{"file_path":"a","old_string":"<b> & \"c\"","new_string":"\u2028 "}`: `{"file_path":"a","old_string":"<b> & \"c\"","new_string":"\u2028","replace_all":false}`,
	} {
		if got := normalizeEdit(in); got != want {
			t.Errorf("normalizeEdit(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestWithSchemaDraft(t *testing.T) {
	for in, want := range map[string]string{
		``:                                `{"$schema":"` + SchemaDraft + `","type":"object","properties":{}}`,
		`{}`:                              `{"$schema":"` + SchemaDraft + `"}`,
		` { "type" : "object" } `:         `{"$schema":"` + SchemaDraft + `","type":"object"}`,
		`{"$schema":"x","type":"object"}`: `{"$schema":"x","type":"object"}`,
	} {
		got, err := withSchemaDraft([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("withSchemaDraft(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := withSchemaDraft([]byte(`[1]`)); err == nil {
		t.Error("an array schema: no error")
	}
}

func TestDeviceID(t *testing.T) {
	sum := sha256.Sum256([]byte("harnessflow claude-code device"))
	if hex.EncodeToString(sum[:]) != DeviceID {
		t.Errorf("DeviceID is not the documented hash")
	}
}
