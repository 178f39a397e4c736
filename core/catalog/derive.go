package catalog

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/arrowhead-go/arrowhead/core/security"
)

// Bounds supplies the values of "$name" placeholders in schema tags: limits
// known only when a tool is defined (a setting, or a Go constant the tool's
// code also enforces). Every placeholder must be supplied and every bound
// used, or the definition is refused.
type Bounds map[string]int

// MaxCount is the "$count" bound: the largest value a count, an index or a
// line number in a tool's schema declares (2^31, beyond any corpus, result
// or file a server handles). Every schema may say maximum:"$count" without
// listing it in its Bounds, so the number is stated once.
const MaxCount = 1 << 31

// defaultBounds are the placeholders every schema may use without
// supplying them: "$count", and "$path", the longest relative path
// CleanPath admits. A tool or family that supplies one of these names too
// is refused: one bound has one source.
var defaultBounds = Bounds{"count": MaxCount, "path": security.MaxPathBytes}

// SchemaFor derives the schema of the struct type T. Tools get theirs from
// Define; this is for the other schemas a tool sends (an input request's).
//
// How a struct becomes a schema:
//   - each exported field is a property named by its json tag; an embedded
//     struct without a json name contributes its fields (as encoding/json);
//   - a property is required unless its json tag says omitempty or
//     omitzero; the string option makes a scalar a string, as encoding/json
//     writes it;
//   - Go types map to JSON types: string; bool to boolean; integer kinds to
//     integer; floats and json.Number to number; slices to array (items from
//     the element type); map[string]T to an object whose
//     additionalProperties is T's schema; structs to objects that refuse
//     unknown properties; any (an empty interface) to a schema accepting any
//     value; a pointer to its element's schema; json.RawMessage to any
//     value; a type with a MarshalText method to string. A type with its
//     own MarshalJSON or UnmarshalJSON, and []byte (base64 text), are
//     refused rather than guessed at;
//   - tags add the rest: description, enum (comma-separated), pattern (RE2),
//     minLength, maxLength, minimum, maximum, minItems, maxItems,
//     maxProperties, nullable ("true"), and items (for an array's elements)
//     or values (for a map's values) holding "key=value" pairs separated by
//     ";" with the same keys. A numeric tag value "$name" is looked up in
//     bounds.
func SchemaFor[T any](bounds Bounds) (*Schema, error) {
	s, err := deriveObjects(bounds, nil, reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	return s[0], nil
}

// ErrBadSchemaType is returned when a Go type cannot be described.
var ErrBadSchemaType = errors.New("type cannot be described as a schema")

var (
	numberType      = reflect.TypeFor[json.Number]()
	rawType         = reflect.TypeFor[json.RawMessage]()
	jsonMarshaler   = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textMarshaler   = reflect.TypeFor[encoding.TextMarshaler]()
)

// implements reports whether t or *t has i's methods (encoding/json uses
// a pointer method of an addressable value).
func implements(t, i reflect.Type) bool {
	return t.Implements(i) || reflect.PointerTo(t).Implements(i)
}

// deriver derives schemas with a tool's own bounds, which must all be
// used, and its family's, which need not be.
type deriver struct {
	bounds, family Bounds
	used           map[string]bool
	visiting       map[reflect.Type]bool
}

// deriveObjects derives the object schemas of the struct types ts with a
// tool's own bounds and its family's, and reports an own bound no
// placeholder asked for (a typo, or a limit the schema forgot to apply).
func deriveObjects(own, family Bounds, ts ...reflect.Type) ([]*Schema, error) {
	d := &deriver{bounds: own, family: family, used: map[string]bool{}, visiting: map[reflect.Type]bool{}}
	out := make([]*Schema, len(ts))
	for i, t := range ts {
		if t.Kind() != reflect.Struct {
			return nil, fmt.Errorf("%w: %s is not a struct", ErrBadSchemaType, t)
		}
		var err error
		if out[i], err = d.typeSchema(t, t.Name()); err != nil {
			return nil, err
		}
	}
	unused := slices.Sorted(maps.Keys(own))
	if unused = slices.DeleteFunc(unused, func(k string) bool { return d.used[k] }); len(unused) > 0 {
		return nil, fmt.Errorf("bounds %s are not used by any schema tag", strings.Join(unused, ", "))
	}
	return out, nil
}

func (d *deriver) typeSchema(t reflect.Type, path string) (*Schema, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == numberType:
		return &Schema{Type: "number"}, nil
	case t == rawType:
		return &Schema{}, nil
	case implements(t, textMarshaler):
		return &Schema{Type: "string"}, nil
	case implements(t, jsonMarshaler) || implements(t, jsonUnmarshaler):
		return nil, fmt.Errorf("%w: %s (%s) has its own JSON encoding", ErrBadSchemaType, path, t)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		return nil, fmt.Errorf("%w: %s is []byte, which encoding/json writes as base64", ErrBadSchemaType, path)
	}
	switch t.Kind() {
	case reflect.String:
		return &Schema{Type: "string"}, nil
	case reflect.Bool:
		return &Schema{Type: "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &Schema{Type: "integer"}, nil
	case reflect.Float32, reflect.Float64:
		return &Schema{Type: "number"}, nil
	case reflect.Interface:
		if t.NumMethod() == 0 {
			return &Schema{}, nil
		}
	case reflect.Slice, reflect.Array:
		items, err := d.typeSchema(t.Elem(), path+"[]")
		if err != nil {
			return nil, err
		}
		return &Schema{Type: "array", Items: items}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			break
		}
		values, err := d.typeSchema(t.Elem(), path+"{}")
		if err != nil {
			return nil, err
		}
		return &Schema{Type: "object", Properties: map[string]*Schema{}, Additional: values}, nil
	case reflect.Struct:
		return d.object(t, path)
	}
	return nil, fmt.Errorf("%w: %s (%s)", ErrBadSchemaType, path, t)
}

func (d *deriver) object(t reflect.Type, path string) (*Schema, error) {
	if d.visiting[t] {
		return nil, fmt.Errorf("%w: %s is recursive", ErrBadSchemaType, path)
	}
	d.visiting[t] = true
	defer delete(d.visiting, t)
	fields, err := fieldsOf(t)
	if err != nil {
		return nil, err
	}
	s := &Schema{Type: "object", Properties: make(map[string]*Schema, len(fields))}
	for _, f := range fields {
		fpath := path + "." + f.name
		fs, err := d.typeSchema(f.typ, fpath)
		if err != nil {
			return nil, err
		}
		if f.quoted && fs.Type != "" && fs.Type != "array" && fs.Type != "object" {
			// encoding/json writes a scalar with the string option as a
			// JSON string (and ignores the option on other kinds).
			fs = &Schema{Type: "string"}
		}
		if err := d.apply(fs, f.lookup, fpath); err != nil {
			return nil, err
		}
		s.Properties[f.name] = fs
		if !f.optional {
			s.Required = append(s.Required, f.name)
		}
	}
	return s, nil
}

// apply adds the tag keywords lookup finds to s, checking each fits the
// schema's type.
func (d *deriver) apply(s *Schema, lookup func(string) (string, bool), path string) error {
	fail := func(key, why string) error {
		return fmt.Errorf("%w: %s: tag %s %s", ErrBadSchemaType, path, key, why)
	}
	is := func(key string, types ...string) error {
		if !slices.Contains(types, s.Type) {
			return fail(key, "does not apply to type "+strconv.Quote(s.Type))
		}
		return nil
	}
	if v, ok := lookup("description"); ok {
		s.Description = v
	}
	if v, ok := lookup("nullable"); ok {
		if v != "true" {
			return fail("nullable", "must be \"true\"")
		}
		s.Nullable = true
	}
	if v, ok := lookup("enum"); ok {
		if err := is("enum", "string"); err != nil {
			return err
		}
		s.Enum = strings.Split(v, ",")
	}
	if v, ok := lookup("pattern"); ok {
		if err := is("pattern", "string"); err != nil {
			return err
		}
		// Parsing is what can fail; compiling waits for the first argument
		// to check (most tools' patterns are never used by most processes,
		// and a counted repetition costs a start-up ~100 µs to compile).
		if _, err := syntax.Parse(v, syntax.Perl); err != nil {
			return fail("pattern", "is not a valid RE2 expression")
		}
		s.Pattern = v
		s.pattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(v) })
	}
	for _, k := range []struct {
		key, types string
		n          **int     // a count: a non-negative integer
		f          **float64 // a bound on a number
	}{
		{"minLength", "string", &s.MinLength, nil}, {"maxLength", "string", &s.MaxLength, nil},
		{"minItems", "array", &s.MinItems, nil}, {"maxItems", "array", &s.MaxItems, nil},
		{"maxProperties", "object", &s.MaxProperties, nil},
		{"minimum", "integer number", nil, &s.Minimum}, {"maximum", "integer number", nil, &s.Maximum},
	} {
		v, ok := lookup(k.key)
		if !ok {
			continue
		}
		if err := is(k.key, strings.Fields(k.types)...); err != nil {
			return err
		}
		f, err := d.number(v)
		switch {
		case k.f != nil && err != nil:
			return fail(k.key, "must be a number or a supplied $bound")
		case k.f != nil:
			*k.f = &f
		case err != nil || f != float64(int(f)) || f < 0:
			return fail(k.key, "must be a non-negative integer or a supplied $bound")
		default:
			n := int(f)
			*k.n = &n
		}
	}
	for key, sub := range map[string]*Schema{"items": s.Items, "values": s.Additional} {
		v, ok := lookup(key)
		if !ok {
			continue
		}
		if sub == nil || (key == "values" && s.Type != "object") {
			return fail(key, "applies only to "+map[string]string{"items": "an array", "values": "a map"}[key])
		}
		pairs, err := parsePairs(v)
		if err != nil {
			return fail(key, err.Error())
		}
		if err := d.apply(sub, func(k string) (string, bool) { v, ok := pairs[k]; return v, ok }, path+"."+key); err != nil {
			return err
		}
	}
	return nil
}

// number reads a numeric tag value or a $bound.
func (d *deriver) number(v string) (float64, error) {
	if name, ok := strings.CutPrefix(v, "$"); ok {
		n, catalogWide := defaultBounds[name]
		own, isOwn := d.bounds[name]
		family, isFamily := d.family[name]
		switch {
		case catalogWide && (isOwn || isFamily):
			return 0, fmt.Errorf("bound %s is catalog-wide and must not be supplied", name)
		case isOwn && isFamily:
			return 0, fmt.Errorf("bound %s is set by both the tool and its family", name)
		case isOwn:
			d.used[name] = true
			n = own
		case isFamily:
			n = family
		case !catalogWide:
			return 0, fmt.Errorf("bound %s is not supplied", name)
		}
		return float64(n), nil
	}
	return strconv.ParseFloat(v, 64)
}

// parsePairs reads "key=value;key=value".
func parsePairs(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || k == "" {
			return nil, errors.New("must hold key=value pairs separated by ;")
		}
		out[k] = v
	}
	return out, nil
}

// field is one JSON property of a struct type.
type field struct {
	name string
	typ  reflect.Type
	tag  reflect.StructTag
	// optional: omitempty or omitzero (encoding/json may leave it out).
	optional bool
	// quoted: the string option.
	quoted bool
}

// lookup is f.tag.Lookup(key), skipping the scan of the whole tag (which
// holds the description) for the many keys a tag does not mention: every
// server start derives every tool's schemas, asking each field for every
// keyword.
func (f field) lookup(key string) (string, bool) {
	if !strings.Contains(string(f.tag), key) {
		return "", false
	}
	return f.tag.Lookup(key)
}

// fieldsOf lists t's JSON properties by encoding/json's naming rules;
// where those rules would drop a field silently (two of one name) the type
// is refused instead.
func fieldsOf(t reflect.Type) ([]field, error) {
	var fields []field
	seen := map[string]bool{}
	var collect func(reflect.Type) error
	collect = func(st reflect.Type) error {
		for i := range st.NumField() {
			sf := st.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if sf.Anonymous && name == "" {
				if sf.Type.Kind() != reflect.Struct {
					return fmt.Errorf("%w: %s embeds %s, which is not a struct value", ErrBadSchemaType, st, sf.Type)
				}
				if err := collect(sf.Type); err != nil {
					return err
				}
				continue
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			if seen[name] {
				return fmt.Errorf("%w: %s has two properties named %q", ErrBadSchemaType, t, name)
			}
			seen[name] = true
			f := field{name: name, typ: sf.Type, tag: sf.Tag}
			for _, o := range strings.Split(opts, ",") {
				f.optional = f.optional || o == "omitempty" || o == "omitzero"
				f.quoted = f.quoted || o == "string"
			}
			fields = append(fields, f)
		}
		return nil
	}
	return fields, collect(t)
}
