package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/stages/request"
)

// Calibrated pack files: what `harnessflow calibrate` writes beside a
// harness's templates when the harness's Go code has no other way to take
// it from the pack (README "Calibrate a harness"). Each is optional; a pack
// without them shapes requests as before.
const (
	// CalibratedTools is a template (wire_tools.tmpl) rendering to the JSON
	// array that replaces the main request's "tools" field, in the wire's
	// own tool format; it is rendered with [CalibratedData].
	CalibratedTools = "wire_tools"
	// CalibratedHeaders is a data file (wire_headers.json), an object of
	// header name → value set on every upstream request of the harness.
	CalibratedHeaders = "wire_headers.json"
	// CalibratedFields is a data file (wire_fields.json), an object of
	// top-level body fields set on the main request (replacing the field
	// where the body has it, appended otherwise).
	CalibratedFields = "wire_fields.json"
	// CalibratedTitle is a data file (wire_title.json), {"send": false}
	// when the agent sends no title request: the harness's title request
	// is then dropped ({"send": true} changes nothing).
	CalibratedTitle = "wire_title.json"
)

// CalibratedData is what wire_tools.tmpl is rendered with: the turn's
// working directory, date (YYYY-MM-DD), platform, shell name and model.
func CalibratedData(env *Env) map[string]any {
	return map[string]any{"cwd": env.Workspace.Cwd, "date": env.Workspace.Date, "platform": env.Workspace.OS,
		"shell": env.Workspace.Shell, "model": env.Request.Model}
}

// applyCalibrated applies the calibrated pack files of the harness (see
// CalibratedTools) to the shaped request.
func applyCalibrated(env *Env, harnessName string, s *request.Shaped) error {
	p := env.Prompts
	if p.Has(harnessName, CalibratedTools) {
		text, err := p.Render(harnessName, CalibratedTools, CalibratedData(env))
		if err != nil {
			return err
		}
		var tools []json.RawMessage
		if err := json.Unmarshal([]byte(text), &tools); err != nil {
			return fmt.Errorf("%s/%s.tmpl: not a JSON array: %w", harnessName, CalibratedTools, err)
		}
		var b bytes.Buffer
		if err := json.Compact(&b, []byte(text)); err != nil {
			return fmt.Errorf("%s/%s.tmpl: %w", harnessName, CalibratedTools, err)
		}
		if s.Body, err = setFields(s.Body, []field{{"tools", b.Bytes()}}); err != nil {
			return err
		}
	}
	if data, err := p.Data(harnessName, CalibratedFields); err == nil {
		fs, err := orderedFields(data)
		if err != nil {
			return fmt.Errorf("%s/%s: %w", harnessName, CalibratedFields, err)
		}
		if s.Body, err = setFields(s.Body, fs); err != nil {
			return err
		}
	} else if !errors.Is(err, prompts.ErrNotFound) {
		return err
	}
	if data, err := p.Data(harnessName, CalibratedTitle); err == nil {
		var t struct {
			Send *bool `json:"send"`
		}
		if err := json.Unmarshal(data, &t); err != nil || t.Send == nil {
			return fmt.Errorf("%s/%s: want {\"send\": true|false}", harnessName, CalibratedTitle)
		}
		if !*t.Send {
			s.TitleRequest = nil
		}
	} else if !errors.Is(err, prompts.ErrNotFound) {
		return err
	}
	if data, err := p.Data(harnessName, CalibratedHeaders); err == nil {
		var hs map[string]string
		if err := json.Unmarshal(data, &hs); err != nil {
			return fmt.Errorf("%s/%s: want an object of strings: %w", harnessName, CalibratedHeaders, err)
		}
		if s.Headers == nil {
			s.Headers = map[string]string{}
		}
		for k, v := range hs {
			for have := range s.Headers { // the harness's own spelling of the same header goes
				if strings.EqualFold(have, k) {
					delete(s.Headers, have)
				}
			}
			s.Headers[strings.ToLower(k)] = v
		}
	} else if !errors.Is(err, prompts.ErrNotFound) {
		return err
	}
	return nil
}

type field struct {
	key   string
	value json.RawMessage
}

// orderedFields reads a JSON object's members in their order.
func orderedFields(obj []byte) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var out []field
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, field{t.(string), v})
	}
	return out, nil
}

// setFields replaces the members of a JSON object that fs names, in place,
// and appends the others; the order of the object's members is kept.
func setFields(body []byte, fs []field) ([]byte, error) {
	have, err := orderedFields(body)
	if err != nil {
		return nil, fmt.Errorf("calibrated fields: request body: %w", err)
	}
	for _, f := range fs {
		found := false
		for i := range have {
			if have[i].key == f.key {
				have[i].value, found = f.value, true
			}
		}
		if !found {
			have = append(have, f)
		}
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range have {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.key) // a string always marshals
		b.Write(k)
		b.WriteByte(':')
		if err := json.Compact(&b, f.value); err != nil {
			return nil, fmt.Errorf("calibrated fields: %s: %w", f.key, err)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
