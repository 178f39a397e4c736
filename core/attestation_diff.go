package core

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// SurfaceChange is one difference between two manifests: a component added
// or removed, or one field of a component changed.
type SurfaceChange struct {
	// Kind is tool, resource, resource template, prompt or server.
	Kind string
	// Name is the tool or prompt name, the resource URI or the template.
	Name string
	// Change is added, removed or changed.
	Change string
	// Field is the changed field's path within the component
	// (description, inputSchema.properties.path.maxLength, ...); empty for
	// an added or removed component.
	Field string
	// Detail says how: old and new values for a number, bool or short
	// string; "widened" or "narrowed" when a schema now accepts more or
	// less.
	Detail string
}

func (c SurfaceChange) String() string {
	s := c.Kind + " " + c.Name + ": " + c.Change
	if c.Field != "" {
		s += " " + c.Field
	}
	if c.Detail != "" {
		s += " (" + c.Detail + ")"
	}
	return s
}

// DiffManifests lists what changed from old to cur, in a stable order: the
// server block, then tools, resources, resource templates and prompts by
// name, each component's fields by path.
func DiffManifests(old, cur Manifest) []SurfaceChange {
	var out []SurfaceChange
	out = append(out, diffComponent("server", "", old.Server, cur.Server)...)
	out = append(out, diffSet("tool", keyed(old.Tools, func(t ManifestTool) string { return t.Name }),
		keyed(cur.Tools, func(t ManifestTool) string { return t.Name }))...)
	out = append(out, diffSet("resource", keyed(old.Resources, func(r ManifestResource) string { return r.URI }),
		keyed(cur.Resources, func(r ManifestResource) string { return r.URI }))...)
	out = append(out, diffSet("resource template", keyed(old.ResourceTemplates, func(r ManifestResource) string { return r.URITemplate }),
		keyed(cur.ResourceTemplates, func(r ManifestResource) string { return r.URITemplate }))...)
	out = append(out, diffSet("prompt", keyed(old.Prompts, func(p ManifestPrompt) string { return p.Name }),
		keyed(cur.Prompts, func(p ManifestPrompt) string { return p.Name }))...)
	return out
}

func keyed[T any](items []T, key func(T) string) map[string]any {
	m := make(map[string]any, len(items))
	for _, it := range items {
		m[key(it)] = it
	}
	return m
}

func diffSet(kind string, old, cur map[string]any) []SurfaceChange {
	var out []SurfaceChange
	for _, n := range unionKeys(old, cur) {
		o, inOld := old[n]
		c, inCur := cur[n]
		switch {
		case !inOld:
			out = append(out, SurfaceChange{Kind: kind, Name: n, Change: "added"})
		case !inCur:
			out = append(out, SurfaceChange{Kind: kind, Name: n, Change: "removed"})
		default:
			out = append(out, diffComponent(kind, n, o, c)...)
		}
	}
	return out
}

// diffComponent compares two components field by field, as generic JSON.
func diffComponent(kind, name string, old, cur any) []SurfaceChange {
	var out []SurfaceChange
	diffValue("", generic(old), generic(cur), func(path, change, detail string) {
		out = append(out, SurfaceChange{Kind: kind, Name: name, Change: change, Field: path, Detail: detail})
	})
	return out
}

// generic renders v as decoded JSON (maps, slices, json.Number, ...).
func generic(v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("manifest diff: %v", err)) // manifests always marshal
	}
	var g any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&g); err != nil {
		panic(fmt.Sprintf("manifest diff: %v", err))
	}
	return g
}

// unionKeys is the keys of a and b, sorted.
func unionKeys(a, b map[string]any) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// diffValue reports every difference between a and b under path.
func diffValue(path string, a, b any, report func(path, change, detail string)) {
	am, aObj := a.(map[string]any)
	bm, bObj := b.(map[string]any)
	if aObj && bObj {
		for _, k := range unionKeys(am, bm) {
			av, inA := am[k]
			bv, inB := bm[k]
			p := join(path, k)
			switch {
			case !inA:
				report(p, "added", schemaDirection(path, k, "added"))
			case !inB:
				report(p, "removed", schemaDirection(path, k, "removed"))
			default:
				diffValue(p, av, bv, report)
			}
		}
		return
	}
	as, aList := a.([]any)
	bs, bList := b.([]any)
	if aList && bList && allScalars(as) && allScalars(bs) {
		added, removed := setDiff(as, bs)
		last := path[strings.LastIndexByte(path, '.')+1:]
		for _, v := range added {
			report(path, "added "+v, listDirection(last, "added"))
		}
		for _, v := range removed {
			report(path, "removed "+v, listDirection(last, "removed"))
		}
		return
	}
	if equalJSON(a, b) {
		return
	}
	report(path, "changed", valueDetail(path, a, b))
}

func allScalars(l []any) bool {
	for _, v := range l {
		switch v.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

func scalarText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func setDiff(a, b []any) (added, removed []string) {
	as, bs := map[string]bool{}, map[string]bool{}
	for _, v := range a {
		as[scalarText(v)] = true
	}
	for _, v := range b {
		bs[scalarText(v)] = true
	}
	for k := range bs {
		if !as[k] {
			added = append(added, k)
		}
	}
	for k := range as {
		if !bs[k] {
			removed = append(removed, k)
		}
	}
	sort.Strings(added)
	sort.Strings(removed)
	return added, removed
}

func equalJSON(a, b any) bool { return scalarText(a) == scalarText(b) }

// inSchema reports whether a path lies inside a tool's input or output
// schema, where widening and narrowing mean something.
func inSchema(path string) bool {
	return path == "inputSchema" || path == "outputSchema" ||
		strings.HasPrefix(path, "inputSchema.") || strings.HasPrefix(path, "outputSchema.")
}

// schemaDirection classifies a key added to or removed from a schema
// object: a property added widens what the schema admits; a constraint
// keyword added narrows it.
func schemaDirection(parent, key, change string) string {
	if !inSchema(parent) {
		return ""
	}
	last := parent[strings.LastIndexByte(parent, '.')+1:]
	widens := change == "added"
	switch {
	case last == "properties" || last == "$defs" || last == "definitions":
		// A new property or definition admits more.
	case constraintKeyword(key):
		// A new constraint admits less.
		widens = !widens
	default:
		return ""
	}
	if widens {
		return "widened"
	}
	return "narrowed"
}

func constraintKeyword(k string) bool {
	switch k {
	case "required", "enum", "const", "pattern", "format", "maxLength", "minLength", "maximum", "minimum",
		"exclusiveMaximum", "exclusiveMinimum", "maxItems", "minItems", "maxProperties", "minProperties",
		"multipleOf", "uniqueItems", "not":
		return true
	}
	return k == "additionalProperties"
}

// listDirection classifies an element added to or removed from a schema's
// required or enum list.
func listDirection(list, change string) string {
	switch list {
	case "required":
		if change == "added" {
			return "narrowed"
		}
		return "widened"
	case "enum", "type":
		if change == "added" {
			return "widened"
		}
		return "narrowed"
	}
	return ""
}

// valueDetail says how a scalar changed: old -> new for a number or bool
// (and which way a bound moved), nothing for text, which may be long.
func valueDetail(path string, a, b any) string {
	an, aNum := a.(json.Number)
	bn, bNum := b.(json.Number)
	if aNum && bNum {
		detail := an.String() + " -> " + bn.String()
		if dir := boundDirection(path, an, bn); dir != "" {
			detail += ", " + dir
		}
		return detail
	}
	ab, aBool := a.(bool)
	bb, bBool := b.(bool)
	if aBool && bBool {
		detail := strconv.FormatBool(ab) + " -> " + strconv.FormatBool(bb)
		if inSchema(path) && strings.HasSuffix(path, "additionalProperties") {
			if bb {
				detail += ", widened"
			} else {
				detail += ", narrowed"
			}
		}
		return detail
	}
	if _, ok := a.(string); ok {
		if _, ok := b.(string); ok && inSchema(path) && slices.Contains([]string{"type", "format", "pattern"}, path[strings.LastIndexByte(path, '.')+1:]) {
			return scalarText(a) + " -> " + scalarText(b)
		}
	}
	return ""
}

// boundDirection says whether a moved bound widened or narrowed a schema.
func boundDirection(path string, a, b json.Number) string {
	if !inSchema(path) {
		return ""
	}
	af, err1 := a.Float64()
	bf, err2 := b.Float64()
	if err1 != nil || err2 != nil || af == bf {
		return ""
	}
	key := path[strings.LastIndexByte(path, '.')+1:]
	var upper bool
	switch key {
	case "maxLength", "maximum", "exclusiveMaximum", "maxItems", "maxProperties":
		upper = true
	case "minLength", "minimum", "exclusiveMinimum", "minItems", "minProperties":
		upper = false
	default:
		return ""
	}
	if (bf > af) == upper {
		return "widened"
	}
	return "narrowed"
}
