package core

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/arrowhead-go/arrowhead/core/catalog"
)

// argShapes describes the arguments by type and size, never by value. Only
// argument names the schema declares are recorded (a caller-invented key is
// itself caller data); the rest are counted.
func argShapes(schema *catalog.Schema, raw json.RawMessage) map[string]string {
	shapes := map[string]string{}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		shapes["_arguments"] = "invalid(" + strconv.Itoa(len(raw)) + ")"
		return shapes
	}
	extra := 0
	for k, v := range obj {
		if schema == nil || schema.Properties[k] == nil {
			extra++
			continue
		}
		shapes[k] = shapeOf(v)
	}
	if extra > 0 {
		shapes["_undeclared"] = strconv.Itoa(extra)
	}
	return shapes
}

// shapeOf renders a JSON value's type and size: string(12), array(3),
// object(2), number, boolean, null.
func shapeOf(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "empty"
	}
	switch v[0] {
	case '"':
		var s string
		if json.Unmarshal(v, &s) != nil {
			return "string(?)"
		}
		return "string(" + strconv.Itoa(utf8.RuneCountInString(s)) + ")"
	case '[':
		var a []json.RawMessage
		if json.Unmarshal(v, &a) != nil {
			return "array(?)"
		}
		return "array(" + strconv.Itoa(len(a)) + ")"
	case '{':
		var o map[string]json.RawMessage
		if json.Unmarshal(v, &o) != nil {
			return "object(?)"
		}
		return "object(" + strconv.Itoa(len(o)) + ")"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// stringShapes shapes a map of string arguments (prompt arguments), keeping
// only declared names.
func stringShapes(declared func(string) bool, args map[string]string) map[string]string {
	shapes := map[string]string{}
	extra := 0
	for k, v := range args {
		if !declared(k) {
			extra++
			continue
		}
		shapes[k] = "string(" + strconv.Itoa(utf8.RuneCountInString(v)) + ")"
	}
	if extra > 0 {
		shapes["_undeclared"] = strconv.Itoa(extra)
	}
	return shapes
}
