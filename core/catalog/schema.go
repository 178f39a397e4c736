package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Schema is the JSON Schema subset the catalog advertises and enforces. The
// schema a client sees is the schema every call is validated against: there
// is one definition, not two. Schemas are derived from Go types (see
// SchemaFor and derive.go), never written by hand.
//
// Supported: type (object, string, integer, number, boolean, array, or any),
// description, properties, required, additionalProperties (false or a
// schema), items, enum, pattern, minLength/maxLength (in characters),
// minimum/maximum, minItems/maxItems, maxProperties, and null alongside the
// type.
type Schema struct {
	Type        string
	Description string
	Properties  map[string]*Schema
	Required    []string
	// Additional is the schema for properties not listed; nil forbids them.
	Additional    *Schema
	Items         *Schema
	Enum          []string
	Pattern       string
	MinLength     *int
	MaxLength     *int
	Minimum       *float64
	Maximum       *float64
	MinItems      *int
	MaxItems      *int
	MaxProperties *int
	// Nullable permits JSON null in addition to Type.
	Nullable bool

	// pattern is Pattern compiled, on the first validation; nil unless
	// the schema was derived.
	pattern func() *regexp.Regexp
}

// MarshalJSON renders the schema as JSON Schema, keys in sorted order (as
// encoding/json writes a map's). It is the schema's one rendering: the
// tool list, the listing, the snapshots and the integrity digest all read
// it. It appends directly, since every server start renders every tool's
// schemas for the tool list.
func (s *Schema) MarshalJSON() ([]byte, error) {
	return s.appendJSON(make([]byte, 0, 512)), nil
}

// appendJSON appends the schema's JSON. Its keys are written in sorted
// order, as encoding/json writes a map's.
func (s *Schema) appendJSON(b []byte) []byte {
	b = append(b, '{')
	key := func(k string) {
		if b[len(b)-1] != '{' {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, '"', ':')
	}
	intKey := func(k string, v *int) {
		if v != nil {
			key(k)
			b = strconv.AppendInt(b, int64(*v), 10)
		}
	}
	numKey := func(k string, v *float64) {
		if v != nil {
			key(k)
			b = appendJSONValue(b, *v)
		}
	}
	object := s.Type == "object"
	if object {
		key("additionalProperties")
		if s.Additional != nil {
			b = s.Additional.appendJSON(b)
		} else {
			b = append(b, "false"...)
		}
	}
	if s.Description != "" {
		key("description")
		b = appendJSONValue(b, s.Description)
	}
	if len(s.Enum) > 0 {
		key("enum")
		b = appendJSONValue(b, s.Enum)
	}
	if s.Items != nil {
		key("items")
		b = s.Items.appendJSON(b)
	}
	intKey("maxItems", s.MaxItems)
	intKey("maxLength", s.MaxLength)
	if object {
		intKey("maxProperties", s.MaxProperties)
	}
	numKey("maximum", s.Maximum)
	intKey("minItems", s.MinItems)
	intKey("minLength", s.MinLength)
	numKey("minimum", s.Minimum)
	if s.Pattern != "" {
		key("pattern")
		b = appendJSONValue(b, s.Pattern)
	}
	if object {
		key("properties")
		b = append(b, '{')
		names := slices.Sorted(maps.Keys(s.Properties))
		for i, name := range names {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONValue(b, name)
			b = append(b, ':')
			b = s.Properties[name].appendJSON(b)
		}
		b = append(b, '}')
		if len(s.Required) > 0 {
			key("required")
			b = appendJSONValue(b, slices.Sorted(slices.Values(s.Required)))
		}
	}
	if s.Type != "" {
		key("type")
		if s.Nullable {
			b = append(b, '[')
			b = appendJSONValue(b, s.Type)
			b = append(b, ",\"null\"]"...)
		} else {
			b = appendJSONValue(b, s.Type)
		}
	}
	return append(b, '}')
}

// appendJSONValue appends v as encoding/json writes it (a string, a
// number or a string slice: none can fail), without HTML escaping, as the
// integrity digest and the surface snapshots encode (a transport's encoder
// escapes again as it likes).
func appendJSONValue(b []byte, v any) []byte {
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	b = buf.Bytes()
	return b[:len(b)-1] // Encode's newline
}

// maxValidationDepth bounds recursion through nested arguments.
const maxValidationDepth = 32

// Validate checks v (as decoded by encoding/json with UseNumber) against the
// schema. The error names the argument path and the rule, never the value.
func (s *Schema) Validate(v any) error {
	return s.validate(v, "arguments", 0)
}

func (s *Schema) validate(v any, path string, depth int) error {
	if depth > maxValidationDepth {
		return fmt.Errorf("%s is nested too deeply", path)
	}
	if v == nil {
		if s.Nullable || s.Type == "" {
			return nil
		}
		return fmt.Errorf("%s must be %s", path, article(s.Type))
	}
	switch s.Type {
	case "":
		return nil
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s must be an object", path)
		}
		if s.MaxProperties != nil && len(obj) > *s.MaxProperties {
			return fmt.Errorf("%s has more than %d entries", path, *s.MaxProperties)
		}
		for _, r := range s.Required {
			if _, ok := obj[r]; !ok {
				return fmt.Errorf("%s is required", join(path, r))
			}
		}
		// Visit keys in a stable order so the first error is deterministic.
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sub, ok := s.Properties[k]
			if !ok {
				if s.Additional == nil {
					// The unexpected key is caller-chosen: never echo it.
					return fmt.Errorf("%s has an unexpected property", path)
				}
				sub = s.Additional
				if err := sub.validate(obj[k], path+" entry", depth+1); err != nil {
					return err
				}
				continue
			}
			if err := sub.validate(obj[k], join(path, k), depth+1); err != nil {
				return err
			}
		}
		return nil
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s must be an array", path)
		}
		if s.MinItems != nil && len(arr) < *s.MinItems {
			return fmt.Errorf("%s must have at least %d items", path, *s.MinItems)
		}
		if s.MaxItems != nil && len(arr) > *s.MaxItems {
			return fmt.Errorf("%s must have at most %d items", path, *s.MaxItems)
		}
		if s.Items != nil {
			for i, item := range arr {
				if err := s.Items.validate(item, path+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	case "string":
		str, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s must be a string", path)
		}
		n := utf8.RuneCountInString(str)
		if s.MinLength != nil && n < *s.MinLength {
			return fmt.Errorf("%s must be at least %d characters", path, *s.MinLength)
		}
		if s.MaxLength != nil && n > *s.MaxLength {
			return fmt.Errorf("%s must be at most %d characters", path, *s.MaxLength)
		}
		if len(s.Enum) > 0 && !slices.Contains(s.Enum, str) {
			return fmt.Errorf("%s must be one of the allowed values", path)
		}
		if s.pattern != nil && !s.pattern().MatchString(str) {
			return fmt.Errorf("%s does not match the required pattern", path)
		}
		return nil
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s must be a boolean", path)
		}
		return nil
	case "integer", "number":
		f, ok := number(v)
		if !ok {
			return fmt.Errorf("%s must be %s", path, article(s.Type))
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%s must be a finite number", path)
		}
		if s.Type == "integer" && (f != math.Trunc(f) || !integerText(v)) {
			return fmt.Errorf("%s must be an integer", path)
		}
		if s.Minimum != nil && f < *s.Minimum {
			return fmt.Errorf("%s must be at least %s", path, fmtNum(*s.Minimum))
		}
		if s.Maximum != nil && f > *s.Maximum {
			return fmt.Errorf("%s must be at most %s", path, fmtNum(*s.Maximum))
		}
		return nil
	}
	return fmt.Errorf("%s has an unsupported schema type", path)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		if err != nil {
			return 0, false
		}
		return f, true
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

// integerText reports whether a parsed number is written as an integer:
// encoding/json decodes 1.0 or 1e2 into no integer type, so the validator
// asks for the digits the decoder accepts.
func integerText(v any) bool {
	n, ok := v.(json.Number)
	return !ok || !strings.ContainsAny(string(n), ".eE")
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func join(path, key string) string {
	if path == "arguments" {
		return "argument '" + key + "'"
	}
	return path + "." + key
}

func article(t string) string {
	switch t {
	case "integer", "object", "array":
		return "an " + t
	}
	return "a " + t
}
