package docs

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/arrowhead-go/arrowhead/core/attach"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Overwrite confirmation.
const (
	// ConfirmInputID names the elicitation asking to confirm an overwrite.
	ConfirmInputID = "confirm_overwrite"
	// confirmTTL bounds how long a confirmation request stays answerable.
	confirmTTL = 10 * time.Minute
)

// DocWrite declares doc_write.
func DocWrite(d Deps) catalog.ToolSpec {
	s := d.Settings
	return catalog.MustTool(catalog.ToolDef{
		Name:    "doc_write",
		Family:  catalog.FamilyDocs,
		Scope:   "docs:write",
		Ceiling: catalog.Ceiling{Var: "ARROWHEAD_DOC_WRITE_PER_MINUTE", Default: 30},
		Description: "Write a JSON, Markdown or text document to the corpus from content or an attachment {source, filename?, mime_type?}. " +
			"Creates a new document; overwrite=true replaces one, after confirmation where the client supports it. Example: doc_write(path=\"notes/todo.md\", content=\"# Todo\")",
		Input: catalog.Object(map[string]*catalog.Schema{
			"path":       catalog.String("Document path relative to the corpus root; its extension sets the format.", security.MaxPathBytes),
			"content":    catalog.String("The document text (JSON, Markdown or plain text).", s.DocWriteMaxBytes),
			"overwrite":  catalog.Boolean("Replace an existing document."),
			"attachment": attach.AttachmentSchema(s.DocWriteMaxBytes),
		}, "path"),
		Output: catalog.Object(map[string]*catalog.Schema{
			"path":          catalog.String("The document written.", 0),
			"size":          catalog.Integer("Bytes written.", 0, 1<<53),
			"created":       catalog.Boolean("False when an existing document was replaced."),
			"replaced_size": catalog.Integer("Size of the replaced document (0 when created).", 0, 1<<53),
			"sha256":        catalog.String("SHA-256 of the bytes written.", 64),
		}, "path", "size", "created", "replaced_size", "sha256"),
		Annotations: catalog.Annotations{Title: "Write document", Destructive: true},
		Handler: func(ctx context.Context, call catalog.Call) (catalog.Result, error) {
			var args struct {
				Path       string             `json:"path"`
				Content    *string            `json:"content"`
				Overwrite  bool               `json:"overwrite"`
				Attachment *attach.Attachment `json:"attachment"`
			}
			if err := call.Bind(&args); err != nil {
				return catalog.Result{}, err
			}
			return d.write(ctx, call, args.Path, args.Content, args.Attachment, args.Overwrite)
		},
	})
}

func (d Deps) write(ctx context.Context, call catalog.Call, reqPath string, text *string, att *attach.Attachment, overwrite bool) (catalog.Result, error) {
	s := d.Settings
	if (text == nil) == (att == nil) {
		return catalog.Result{}, catalog.Invalid("Provide exactly one of content or attachment.")
	}
	rel, err := docPath(reqPath)
	if err != nil {
		return catalog.Result{}, err
	}
	if !d.allowedExt(rel) {
		return catalog.Result{}, catalog.Invalid("The path must end in an allowed document extension (%s).", strings.Join(s.DocAllowedExtensions, ", "))
	}
	if err := d.authorize(ctx, call.Principal, ports.ActionWrite, rel); err != nil {
		return catalog.Result{}, err
	}
	var data []byte
	if text != nil {
		data = []byte(*text)
	} else {
		res, err := attach.Resolve(*att, s.DocAllowedExtensions, s.DocWriteMaxBytes)
		if err != nil {
			return catalog.Result{}, err
		}
		if formatOf("x"+res.Ext) != formatOf(rel) {
			return catalog.Result{}, catalog.Invalid("The attachment's document type does not match the path's extension.")
		}
		data = res.Data
	}
	if len(data) > s.DocWriteMaxBytes {
		return catalog.Result{}, catalog.Invalid("The document exceeds the %d byte limit.", s.DocWriteMaxBytes)
	}
	if err := d.validate(formatOf(rel), data); err != nil {
		return catalog.Result{}, err
	}
	st, err := d.store()
	if err != nil {
		return catalog.Result{}, err
	}
	mode := ports.CreateOnly
	if _, err := st.Stat(ctx, rel); err == nil {
		if !overwrite {
			return catalog.Result{}, catalog.Invalid("A document already exists at this path; set overwrite=true to replace it.")
		}
		if s.RequireWriteConfirmation && call.Caps.Elicitation {
			confirmed, need, err := d.confirm(call, rel, data)
			if err != nil || need != nil {
				return catalog.Result{NeedInput: need}, err
			}
			if !confirmed {
				return catalog.Result{}, catalog.Refuse(catalog.KindAuthorization, "The overwrite was declined; the document was not changed.")
			}
		}
		mode = ports.Replace
	} else if !errors.Is(err, ports.ErrNotFound) {
		return catalog.Result{}, storeRefusal(err)
	}
	res, err := st.Write(ctx, rel, data, mode)
	if err != nil {
		return catalog.Result{}, storeRefusal(err)
	}
	sum := sha256.Sum256(data)
	verb := "Created"
	if !res.Created {
		verb = "Replaced"
	}
	return catalog.Result{
		Structured: map[string]any{
			"path":          rel,
			"size":          len(data),
			"created":       res.Created,
			"replaced_size": res.PreviousSize,
			"sha256":        hex.EncodeToString(sum[:]),
		},
		Text: verb + " " + rel + " (" + strconv.Itoa(len(data)) + " bytes).",
	}, nil
}

// validate checks content for its format before anything is written.
func (d Deps) validate(format string, data []byte) error {
	switch format {
	case formatJSON:
		if _, err := content.SanitizeJSON(data, content.JSONLimits{
			MaxBytes: d.Settings.DocWriteMaxBytes, MaxDepth: d.Settings.JSONMaxDepth, MaxElements: d.Settings.JSONMaxElements,
		}); err != nil {
			return jsonRefusal(err)
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
func (d Deps) confirm(call catalog.Call, rel string, data []byte) (confirmed bool, need *catalog.InputRequest, err error) {
	ans, answered := call.Inputs[ConfirmInputID]
	if !answered {
		expiry := time.Now().Add(confirmTTL).Unix()
		return false, &catalog.InputRequest{
			ID:      ConfirmInputID,
			Message: "Replace the existing document " + strconv.Quote(content.SanitizeString(rel)) + "? Its current content will be lost.",
			Schema: catalog.Object(map[string]*catalog.Schema{
				"confirm": catalog.Boolean("Confirm the overwrite."),
			}, "confirm"),
			State: strconv.FormatInt(expiry, 10) + "." + d.confirmMAC(call.Principal.Subject, rel, data, expiry),
		}, nil
	}
	expStr, mac, ok := strings.Cut(call.InputState, ".")
	expiry, perr := strconv.ParseInt(expStr, 10, 64)
	if !ok || perr != nil || time.Now().Unix() > expiry ||
		!hmac.Equal([]byte(mac), []byte(d.confirmMAC(call.Principal.Subject, rel, data, expiry))) {
		return false, nil, catalog.Invalid("The confirmation does not match this write or has expired; nothing was changed.")
	}
	if ans.Action != "accept" {
		return false, nil, nil
	}
	v, _ := ans.Content["confirm"].(bool)
	return v, nil, nil
}

func (d Deps) confirmMAC(subject, rel string, data []byte, expiry int64) string {
	sum := sha256.Sum256(data)
	m := hmac.New(sha256.New, d.ConfirmKey)
	for _, part := range []string{"doc_write-overwrite", subject, rel, hex.EncodeToString(sum[:]), strconv.FormatInt(expiry, 10)} {
		m.Write([]byte(part))
		m.Write([]byte{0})
	}
	return hex.EncodeToString(m.Sum(nil))
}
