package core

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/arrowhead-go/arrowhead/core/catalog"
)

// argShapes describes the parsed arguments by type and size, never by
// value. Only argument names the schema declares are recorded (a
// caller-invented key is itself caller data); the rest are counted.
func argShapes(schema *catalog.Schema, args map[string]any, raw json.RawMessage, parseErr error) map[string]string {
	shapes := map[string]string{}
	if parseErr != nil {
		shapes["_arguments"] = "invalid(" + strconv.Itoa(len(raw)) + ")"
		return shapes
	}
	extra := 0
	for k, v := range args {
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

// shapeOf renders a decoded JSON value's type and size: string(12),
// array(3), object(2), number, boolean, null.
func shapeOf(v any) string {
	switch t := v.(type) {
	case string:
		return "string(" + strconv.Itoa(utf8.RuneCountInString(t)) + ")"
	case []any:
		return "array(" + strconv.Itoa(len(t)) + ")"
	case map[string]any:
		return "object(" + strconv.Itoa(len(t)) + ")"
	case bool:
		return "boolean"
	case nil:
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
