// Package policies embeds the default authorization policy and the worked
// examples shipped beside it, so a binary carries them without files.
//
//   - default.json: any authenticated caller may read, search and scan the
//     corpus but write only under "<subject>/"; memory grants reach only
//     memory kinds; the repository may be read and searched. Nothing grants
//     execute, notify, ingest, or SQL (tables or tableless).
//   - read-only-analyst.json: reads reports, queries analytics tables.
//   - team-namespaces.json: shared reading area, per-user and per-team
//     writable namespaces.
//   - coding-agent.json: repository read/search, docs reading, a scratch
//     namespace, and sandboxed execution for one CI subject.
package policies

import "embed"

//go:embed *.json
var files embed.FS

// Default returns the default policy document.
func Default() []byte {
	b, err := files.ReadFile("default.json")
	if err != nil {
		panic("policies: default.json is not embedded")
	}
	return b
}

// Example returns an embedded policy by file name, or nil.
func Example(name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		return nil
	}
	return b
}

// Names lists the embedded policy files.
func Names() []string {
	entries, _ := files.ReadDir(".")
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
