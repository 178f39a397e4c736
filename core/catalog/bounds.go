package catalog

import "github.com/arrowhead-go/arrowhead/core/security"

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
