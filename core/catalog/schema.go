package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
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

// MarshalJSON renders the schema as JSON Schema. It is the schema's one
// rendering: the tool list, the listing, the snapshots and the integrity
// digest all read it. Keys come in sorted order (rendered's fields are in
// that order, which encoding/json keeps) and HTML is not escaped, as the
// digest and the snapshots encode (a transport's encoder escapes again as
// it likes).
func (s *Schema) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(s.rendered())
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}

// rendered is a Schema as JSON Schema writes it, keys in sorted order.
type rendered struct {
	Additional    any                  `json:"additionalProperties,omitempty"`
	Description   string               `json:"description,omitempty"`
	Enum          []string             `json:"enum,omitempty"`
	Items         *rendered            `json:"items,omitempty"`
	MaxItems      *int                 `json:"maxItems,omitempty"`
	MaxLength     *int                 `json:"maxLength,omitempty"`
	MaxProperties *int                 `json:"maxProperties,omitempty"`
	Maximum       *float64             `json:"maximum,omitempty"`
	MinItems      *int                 `json:"minItems,omitempty"`
	MinLength     *int                 `json:"minLength,omitempty"`
	Minimum       *float64             `json:"minimum,omitempty"`
	Pattern       string               `json:"pattern,omitempty"`
	Properties    map[string]*rendered `json:"properties,omitzero"`
	Required      []string             `json:"required,omitempty"`
	Type          any                  `json:"type,omitempty"`
}

// rendered builds the whole tree at once, so one encoder pass writes it.
func (s *Schema) rendered() *rendered {
	if s == nil {
		return nil
	}
	r := &rendered{Description: s.Description, Enum: s.Enum, Items: s.Items.rendered(), MaxItems: s.MaxItems, MaxLength: s.MaxLength,
		Maximum: s.Maximum, MinItems: s.MinItems, MinLength: s.MinLength, Minimum: s.Minimum, Pattern: s.Pattern}
	if s.Type == "object" {
		// additionalProperties and properties are always stated.
		r.Additional, r.Properties, r.MaxProperties = false, make(map[string]*rendered, len(s.Properties)), s.MaxProperties
		if s.Additional != nil {
			r.Additional = s.Additional.rendered()
		}
		for name, p := range s.Properties {
			r.Properties[name] = p.rendered()
		}
		r.Required = slices.Sorted(slices.Values(s.Required))
	}
	if s.Type != "" {
		r.Type = s.Type
		if s.Nullable {
			r.Type = []string{s.Type, "null"}
		}
	}
	return r
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
		// Visit keys in a stable order so the first error is deterministic
		// (sorted in room on the stack: most arguments have a few keys).
		var room [8]string
		keys := slices.AppendSeq(room[:0], maps.Keys(obj))
		slices.Sort(keys)
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
			// The values are the schema's own, never the caller's.
			return fmt.Errorf("%s must be one of: %s", path, strings.Join(s.Enum, ", "))
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
		// A number keeps its text (see Validate), which says whether it is
		// written as an integer: encoding/json decodes 1.0 or 1e2 into no
		// integer type. Text beyond float64's range is not a number here.
		n, ok := v.(json.Number)
		f, err := n.Float64()
		if !ok || err != nil {
			return fmt.Errorf("%s must be %s", path, article(s.Type))
		}
		if s.Type == "integer" && strings.ContainsAny(string(n), ".eE") {
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
