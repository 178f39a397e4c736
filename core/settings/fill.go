package settings

import (
	"fmt"
	"reflect"
	"sync"
	"time"
)

// Fill sets each field of the struct dst points to that is tagged
// `setting:"NAME"` to the variable NAME as Load parsed it, so a family's
// Config names each variable once, on the field that holds it, instead of
// copying it in code. A field of the variable's own type takes its value;
// an integer field of another size an integer variable's; a time.Duration
// field a seconds variable's. An untagged struct field is filled the same
// way from its own fields' tags. A tag naming no variable, or a field that
// cannot hold its variable, is an error: a mistake the first start reports.
// A value that is not a struct has nothing to fill.
func (s *Settings) Fill(dst any) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("settings: Fill needs a pointer, not %T", dst)
	}
	if v.Elem().Kind() != reflect.Struct {
		return nil // no fields, no tags
	}
	return s.fill(v.Elem())
}

var durationType = reflect.TypeFor[time.Duration]()

func (s *Settings) fill(v reflect.Value) error {
	for i := range v.NumField() {
		f, dst := v.Type().Field(i), v.Field(i)
		name, tagged := f.Tag.Lookup("setting")
		if !tagged {
			if f.Type.Kind() == reflect.Struct && f.IsExported() {
				if err := s.fill(dst); err != nil {
					return err
				}
			}
			continue
		}
		idx, known := fieldOf()[name]
		if !known || !f.IsExported() {
			return fmt.Errorf("settings: %s.%s is tagged %s, which is not a variable of a Settings field", v.Type(), f.Name, name)
		}
		src := reflect.ValueOf(s).Elem().Field(idx)
		switch {
		case src.Type() == f.Type:
			dst.Set(src)
		case f.Type == durationType && src.Kind() == reflect.Float64:
			dst.SetInt(int64(Seconds(src.Float())))
		case src.CanInt() && dst.CanInt() && f.Type != durationType:
			dst.SetInt(src.Int())
		default:
			return fmt.Errorf("settings: %s.%s (%s) cannot hold %s (%s)", v.Type(), f.Name, f.Type, name, src.Type())
		}
	}
	return nil
}

// fieldOf maps each variable's name to the index of the Settings field it
// parses into, read once from the table itself: the pointer each row
// parses into is the field.
var fieldOf = sync.OnceValue(func() map[string]int {
	var probe Settings
	probe.Limits = map[string]int{}
	fields := reflect.ValueOf(&probe).Elem()
	byAddr := make(map[any]int, fields.NumField())
	for i := range fields.NumField() {
		byAddr[fields.Field(i).Addr().Interface()] = i
	}
	out := map[string]int{}
	for _, v := range probe.vars() {
		if i, ok := byAddr[v.dst]; ok {
			out[v.Name] = i
		}
	}
	return out
})
