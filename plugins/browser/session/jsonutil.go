package session

import "encoding/json"

func unmarshalJSON(raw []byte, v any) error { return json.Unmarshal(raw, v) }
