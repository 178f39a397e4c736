package attach

import "encoding/json"

// Deny answers a pre-tool-use hook input with a denial in its client's
// shape, the one the attachment checks deny in, for a check run beside them
// (the pinned-surface check of arrowhead hook attachments --pin). An input
// from no client this hook knows gets "no change": there is no shape to
// deny in.
func Deny(in []byte, reason string) ([]byte, error) {
	var env map[string]any
	if err := json.Unmarshal(in, &env); err != nil || env == nil {
		return passThrough(dialectUnknown)
	}
	d := detect(env)
	if d == dialectUnknown {
		return passThrough(d)
	}
	return deny(d, reason)
}
