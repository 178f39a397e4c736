package settings

import "slices"

// Section is a part of the configuration reference: the seed's sections, in
// the seed's order, plus any this server adds (Extension).
type Section struct {
	Title string
	// About introduces the section's variables in a sentence or two.
	About string
	// Extension marks a section the seed's reference does not have.
	Extension bool
}

// in places vars under section.
func in(section Section, vars ...*Var) []*Var {
	for _, v := range vars {
		v.Section = section
	}
	return vars
}

// Doc is what the reference documentation says of one variable.
type Doc struct {
	Name string
	// Default is the value the server uses when the variable is unset.
	Default string
	Type    string
	Rule    string
	Meaning string
	Secret  bool
	// Extension marks a variable beyond the seed's reference (Extensions).
	Extension bool
	Section   Section
}

// Docs lists every variable as the reference documents it, in table order:
// section by section, each section's variables together.
func Docs() []Doc { return DocsWith(toolCeilings) }

// DocsWith is Docs with ceilings as the tools' ceiling rows: what the
// reference generator documents from the tools' definitions as it
// rewrites ceilings.go.
func DocsWith(ceilings []ToolCeiling) []Doc {
	s := Settings{Limits: map[string]int{}}
	vars := s.varsWith(ceilings)
	out := make([]Doc, len(vars))
	for i, v := range vars {
		out[i] = Doc{Name: v.Name, Default: v.Default, Type: v.Type, Rule: v.Rule(), Meaning: v.Meaning,
			Secret: v.Secret, Extension: slices.Contains(Extensions, v.Name), Section: v.Section}
	}
	return out
}
