package ports

// Tokenizer counts tokens the way a model's BPE vocabulary splits text, so
// the context packer can hold a bundle to a token budget. Implementations
// work offline (the vocabulary is part of the binary) and are safe for
// concurrent use.
type Tokenizer interface {
	// Count returns the number of tokens text encodes to, with no special
	// tokens recognised (text that spells one is counted as plain text).
	Count(text string) int
	// Name says which tokenizer counted (e.g. "cl100k_base"); the pack
	// manifest reports it so counts are reproducible.
	Name() string
}
