// Package tokenizer is the context packer's token counter: OpenAI's
// cl100k_base byte-pair encoding (github.com/pkoukk/tiktoken-go), with the
// vocabulary read from the copy embedded in the binary
// (github.com/pkoukk/tiktoken-go-loader's offline loader), so counting
// never touches the network or the disk at run time.
package tokenizer

import (
	"fmt"
	"sync"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// Encoding is the vocabulary counted with.
const Encoding = "cl100k_base"

// Tokenizer counts cl100k_base tokens; it implements ports.Tokenizer and
// is safe for concurrent use.
type Tokenizer struct {
	enc *tiktoken.Tiktoken
}

var (
	loadOnce sync.Once
	loaded   *tiktoken.Tiktoken
	loadErr  error
)

// New decodes the embedded vocabulary (once per process; it takes a few
// hundred milliseconds) and returns the tokenizer.
func New() (*Tokenizer, error) {
	loadOnce.Do(func() {
		// The library's default loader downloads the vocabulary; the
		// offline loader is installed before the first encoding is built,
		// so nothing is ever fetched.
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		loaded, loadErr = tiktoken.GetEncoding(Encoding)
	})
	if loadErr != nil {
		return nil, fmt.Errorf("loading the embedded %s vocabulary: %w", Encoding, loadErr)
	}
	return &Tokenizer{enc: loaded}, nil
}

// Count implements ports.Tokenizer: special-token text is encoded as
// ordinary text.
func (t *Tokenizer) Count(text string) int { return len(t.enc.EncodeOrdinary(text)) }

// Encode returns the token ids, for checking against published encodings.
func (t *Tokenizer) Encode(text string) []int { return t.enc.EncodeOrdinary(text) }

// Name implements ports.Tokenizer.
func (t *Tokenizer) Name() string { return Encoding }
