package catalog

import "github.com/arrowhead-go/arrowhead/core/security"

// CleanPath validates a caller's relative path argument (a document, a
// repository file): every tool that takes one refuses the same ones, with
// a message that never echoes the path.
func CleanPath(p string) (string, error) {
	rel, err := security.CleanRelPath(p)
	if err != nil {
		return "", Invalid("%s", Sentence(err.Error()))
	}
	return rel, nil
}

// PrefixRule says how a path_prefix matches, for a tool whose prefix
// reached nothing (most often a mistyped one).
const PrefixRule = "path_prefix matches whole path components from the root " +
	"(\"src\" covers \"src/a.py\", not \"lib/src/a.py\" or \"srcx/a.py\")."

// CleanPrefix validates a caller's path_prefix argument ("" is the whole
// tree), alike for every tool that takes one.
func CleanPrefix(p string) (string, error) {
	rel, err := security.CleanRelPrefix(p)
	if err != nil {
		return "", Invalid("The path prefix is refused: %s.", err.Error())
	}
	return rel, nil
}
