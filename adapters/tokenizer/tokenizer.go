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
// is safe for concurrent use. The vocabulary is decoded on first use, not
// at construction: decoding 100,000 ranks costs about 100 ms and 15 MB,
// which every stdio start would otherwise pay before its first answer. The
// vocabulary is compiled into the binary, so its decoding cannot depend on
// the machine; the package's tests decode it and check published counts.
type Tokenizer struct{}

var (
	loadOnce sync.Once
	loaded   *tiktoken.Tiktoken
	loadErr  error
)

// New returns the tokenizer.
func New() (*Tokenizer, error) { return &Tokenizer{}, nil }

// encoding decodes the embedded vocabulary once per process. A failure is
// a defect of the build (the bytes are fixed), so it panics, which the
// guard chain's boundary turns into a masked refusal.
func encoding() *tiktoken.Tiktoken {
	loadOnce.Do(func() {
		// The library's default loader downloads the vocabulary; the
		// offline loader is installed before the first encoding is built,
		// so nothing is ever fetched.
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		loaded, loadErr = tiktoken.GetEncoding(Encoding)
	})
	if loadErr != nil {
		panic(fmt.Sprintf("tokenizer: the embedded %s vocabulary does not decode: %v", Encoding, loadErr))
	}
	return loaded
}

// Count implements ports.Tokenizer: special-token text is encoded as
// ordinary text.
func (t *Tokenizer) Count(text string) int { return len(encoding().EncodeOrdinary(text)) }

// Encode returns the token ids, for checking against published encodings.
func (t *Tokenizer) Encode(text string) []int { return encoding().EncodeOrdinary(text) }

// Name implements ports.Tokenizer.
func (t *Tokenizer) Name() string { return Encoding }
