package docs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/arrowhead-go/arrowhead/core/attach"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Overwrite confirmation.
const (
	// ConfirmInputID names the elicitation asking to confirm an overwrite.
	ConfirmInputID = "confirm_overwrite"
	// confirmTTL bounds how long a confirmation request stays answerable.
	confirmTTL = 10 * time.Minute
)

type docWriteInput struct {
	Path       string             `json:"path" description:"Document path relative to the corpus root; its extension sets the format." maxLength:"$path"`
	Content    *string            `json:"content,omitempty" description:"The document text (JSON, Markdown or plain text)." maxLength:"$content"`
	Overwrite  bool               `json:"overwrite,omitempty" description:"Replace an existing document."`
	Attachment *attach.Attachment `json:"attachment,omitempty" description:"A document attachment: {source, filename?, mime_type?}."`
}

type docWriteOutput struct {
	Path         string `json:"path" description:"The document written."`
	Size         int    `json:"size" description:"Bytes written." minimum:"0" maximum:"9007199254740992"`
	Created      bool   `json:"created" description:"False when an existing document was replaced."`
	ReplacedSize int64  `json:"replaced_size" description:"Size of the replaced document (0 when created)." minimum:"0" maximum:"9007199254740992"`
	SHA256       string `json:"sha256" description:"SHA-256 of the bytes written." maxLength:"64"`
}

// confirmAnswer is what the overwrite confirmation asks the client for.
type confirmAnswer struct {
	Confirm bool `json:"confirm" description:"Confirm the overwrite."`
}

var confirmSchema = sync.OnceValue(func() *catalog.Schema {
	s, err := catalog.SchemaFor[confirmAnswer](nil)
	if err != nil {
		panic(err) // a fixed type; TestOverwriteConfirmation derives it
	}
	return s
})

// docWrite defines doc_write; "$content" and the attachment's bounds are
// the family's ARROWHEAD_DOC_WRITE_MAX_BYTES.
var docWrite = catalog.Define[docWriteInput, docWriteOutput](catalog.ToolDef{
	Name:    "doc_write",
	Scope:   "docs:write",
	Ceiling: catalog.Ceiling{Var: "ARROWHEAD_DOC_WRITE_PER_MINUTE", Default: 30},
	Description: "Write a JSON, Markdown or text document to the corpus from content or an attachment {source, filename?, mime_type?}. " +
		"Creates a new document; overwrite=true replaces one, after confirmation where the client supports it. Example: doc_write(path=\"notes/todo.md\", content=\"# Todo\")",
	Annotations: catalog.Annotations{Title: "Write document", Destructive: true},
})

// write is doc_write: validate, authorize, confirm an overwrite where the
// client can, then write.
func (c *corpus) write(ctx context.Context, call catalog.Call, in docWriteInput) (*catalog.Reply[docWriteOutput], error) {
	cfg := c.config
	text, att := in.Content, in.Attachment
	if (text == nil) == (att == nil) {
		return nil, catalog.Invalid("Provide exactly one of content or attachment.")
	}
	rel, err := catalog.CleanPath(in.Path)
	if err != nil {
		return nil, err
	}
	if !allowedExt(cfg, rel) {
		return nil, catalog.Invalid("The path must end in an allowed document extension (%s).", strings.Join(cfg.Extensions, ", "))
	}
	if err := c.authorize(ctx, call.Principal, ports.ActionWrite, rel); err != nil {
		return nil, err
	}
	var data []byte
	if text != nil {
		data = []byte(*text)
	} else {
		res, err := attach.Resolve(*att, cfg.Extensions, cfg.WriteMaxBytes)
		if err != nil {
			return nil, err
		}
		if content.DocumentFormat("x"+res.Ext) != content.DocumentFormat(rel) {
			return nil, catalog.Invalid("The attachment's document type does not match the path's extension.")
		}
		data = res.Data
	}
	if len(data) > cfg.WriteMaxBytes {
		return nil, catalog.Invalid("The document exceeds the %d byte limit.", cfg.WriteMaxBytes)
	}
	if err := validate(cfg, content.DocumentFormat(rel), data); err != nil {
		return nil, err
	}
	st := c.store
	mode := ports.CreateOnly
	if _, err := st.Stat(ctx, rel); err == nil {
		if !in.Overwrite {
			return nil, catalog.Invalid("A document already exists at this path; set overwrite=true to replace it.")
		}
		if cfg.ConfirmOverwrite && call.Caps.Elicitation {
			confirmed, need, err := c.confirm(call, rel, data)
			if err != nil {
				return nil, err
			}
			if need != nil {
				return catalog.Ask[docWriteOutput](need), nil
			}
			if !confirmed {
				return nil, catalog.Refuse(catalog.KindAuthorization, "The overwrite was declined; the document was not changed.")
			}
		}
		mode = ports.Replace
	} else if !errors.Is(err, ports.ErrNotFound) {
		return nil, storeRefusal(err)
	}
	res, err := st.Write(ctx, rel, data, mode)
	if err != nil {
		return nil, storeRefusal(err)
	}
	sum := sha256.Sum256(data)
	verb := "Created"
	if !res.Created {
		verb = "Replaced"
	}
	return catalog.Answer(docWriteOutput{
		Path:         rel,
		Size:         len(data),
		Created:      res.Created,
		ReplacedSize: res.PreviousSize,
		SHA256:       hex.EncodeToString(sum[:]),
	}, verb+" "+rel+" ("+strconv.Itoa(len(data))+" bytes)."), nil
}

// validate checks content for its format before anything is written.
func validate(c Config, format string, data []byte) error {
	switch format {
	case content.FormatJSON:
		if _, err := content.SanitizeJSON(data, c.WriteJSON); err != nil {
			return documentRefusal(err)
		}
		return nil
	}
	if content.HasUTF7BOM(data) {
		return catalog.Invalid("The document is refused: UTF-7 encoded text is not accepted.")
	}
	if !utf8.Valid(data) {
		return catalog.Invalid("The document must be valid UTF-8 text.")
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return catalog.Invalid("The document must not contain NUL bytes.")
	}
	return nil
}

// confirm runs the overwrite confirmation. The first call returns an input
// request whose state binds the caller's subject, the path and the exact
// bytes (and an expiry) under a keyed MAC; the retry must carry that state
// and an accepting answer, so a confirmation cannot be replayed by another
// caller, for another path, or for other content.
func (c *corpus) confirm(call catalog.Call, rel string, data []byte) (confirmed bool, need *catalog.InputRequest, err error) {
	sum := sha256.Sum256(data)
	parts := []string{"doc_write-overwrite", call.Principal.Key(), rel, hex.EncodeToString(sum[:])}
	ans, answered := call.Inputs[ConfirmInputID]
	if !answered {
		return false, &catalog.InputRequest{
			ID:      ConfirmInputID,
			Message: "Replace the existing document " + strconv.Quote(content.SanitizeString(rel)) + "? Its current content will be lost.",
			Schema:  confirmSchema(),
			State:   c.confirmSeal.Seal(time.Now(), parts...),
		}, nil
	}
	if !c.confirmSeal.Open(time.Now(), call.InputState, parts...) {
		return false, nil, catalog.Invalid("The confirmation does not match this write or has expired; nothing was changed.")
	}
	if ans.Action != "accept" {
		return false, nil, nil
	}
	v, _ := ans.Content["confirm"].(bool)
	return v, nil, nil
}
