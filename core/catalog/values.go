package catalog

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
)

// decode assigns a validated argument tree (as encoding/json decodes it
// with UseNumber) to dst. The JSON text is parsed once, by the guard chain;
// this walks the parsed values into the tool's input type. Validation ran
// first against the schema derived from the same type, so a mismatch here
// is a bug in the catalog, reported without values.
func decode(dst reflect.Value, v any) error {
	t := dst.Type()
	if v == nil {
		dst.SetZero()
		return nil
	}
	if t == numberType {
		switch n := v.(type) {
		case json.Number:
			dst.SetString(string(n))
			return nil
		case string:
			// A number tree built in Go rather than parsed.
		default:
			if f, ok := number(v); ok {
				dst.SetString(fmtNum(f))
				return nil
			}
		}
		return mismatch(t)
	}
	switch t.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if err := decode(p.Elem(), v); err != nil {
			return err
		}
		dst.Set(p)
		return nil
	case reflect.Interface:
		dst.Set(reflect.ValueOf(v))
		return nil
	case reflect.String:
		if s, ok := v.(string); ok {
			dst.SetString(s)
			return nil
		}
	case reflect.Bool:
		if b, ok := v.(bool); ok {
			dst.SetBool(b)
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n, ok := integer(v); ok && !dst.OverflowInt(n) {
			dst.SetInt(n)
			return nil
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n, ok := integer(v); ok && n >= 0 && !dst.OverflowUint(uint64(n)) {
			dst.SetUint(uint64(n))
			return nil
		}
	case reflect.Float32, reflect.Float64:
		if f, ok := number(v); ok {
			dst.SetFloat(f)
			return nil
		}
	case reflect.Slice:
		if arr, ok := v.([]any); ok {
			s := reflect.MakeSlice(t, len(arr), len(arr))
			for i, e := range arr {
				if err := decode(s.Index(i), e); err != nil {
					return err
				}
			}
			dst.Set(s)
			return nil
		}
	case reflect.Map:
		if obj, ok := v.(map[string]any); ok {
			m := reflect.MakeMapWithSize(t, len(obj))
			for k, e := range obj {
				ev := reflect.New(t.Elem()).Elem()
				if err := decode(ev, e); err != nil {
					return err
				}
				m.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), ev)
			}
			dst.Set(m)
			return nil
		}
	case reflect.Struct:
		if obj, ok := v.(map[string]any); ok {
			fields, err := fieldsOf(t)
			if err != nil {
				return err
			}
			for _, f := range fields {
				if e, present := obj[f.name]; present {
					if err := decode(dst.FieldByIndex(f.index), e); err != nil {
						return err
					}
				}
			}
			return nil
		}
	}
	return mismatch(t)
}

func mismatch(t reflect.Type) error {
	return fmt.Errorf("catalog: a validated argument does not fit %s", t)
}

// integer reads a whole number from a decoded JSON value.
func integer(v any) (int64, bool) {
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return i, true
		}
	}
	f, ok := number(v)
	if !ok || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, false
	}
	return int64(f), true
}

// render turns a tool's output value into its structured content: structs
// become maps keyed by their JSON names (omitempty honoured), slices and
// maps are copied, and scalar values keep their Go types. A nil slice or map
// is rendered empty, as the schema promises an array or object there.
func render(v reflect.Value) any {
	t := v.Type()
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		if t.Kind() == reflect.Interface {
			// Values typed any are already JSON-ready (decoded rows, say).
			return v.Elem().Interface()
		}
		return render(v.Elem())
	case reflect.Struct:
		fields, _ := fieldsOf(t) // the output schema's derivation checked them
		m := make(map[string]any, len(fields))
		for _, f := range fields {
			fv := v.FieldByIndex(f.index)
			if f.omitEmpty && isEmpty(fv) {
				continue
			}
			m[f.name] = render(fv)
		}
		return m
	case reflect.Slice, reflect.Array:
		out := make([]any, v.Len())
		for i := range out {
			out[i] = render(v.Index(i))
		}
		return out
	case reflect.Map:
		out := make(map[string]any, v.Len())
		iter := v.MapRange()
		for iter.Next() {
			out[iter.Key().String()] = render(iter.Value())
		}
		return out
	case reflect.String:
		if t == numberType {
			return v.Interface()
		}
		return v.String()
	}
	if t.PkgPath() != "" {
		// A named scalar (a kind or status type) renders as its base type.
		switch {
		case v.CanInt():
			return int(v.Int())
		case v.CanFloat():
			return v.Float()
		case t.Kind() == reflect.Bool:
			return v.Bool()
		}
	}
	return v.Interface()
}

// isEmpty is encoding/json's omitempty test.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice, reflect.Map, reflect.Array, reflect.String:
		return v.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return v.IsZero()
	}
	return false
}
