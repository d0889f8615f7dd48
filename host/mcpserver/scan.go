package mcpserver

import (
	"encoding/json"
	"unicode/utf8"
)

// The front judges every line before the SDK sees it. These read the
// top level of a line json.Valid has passed without building anything
// below it: encoding/json's Decoder took 73 allocations and more time than
// the rest of the judgement to split a tools/call line into its members.

// topLevel returns the members of the JSON object data (known valid), and
// the first key that appears twice, if any.
func topLevel(data []byte) (map[string]json.RawMessage, string) {
	fields := make(map[string]json.RawMessage, 4)
	i := skipSpace(data, 1) // past the '{'
	for i < len(data) && data[i] == '"' {
		end := stringEnd(data, i)
		key, err := jsonString(data[i:end])
		if err != nil {
			return fields, ""
		}
		i = skipSpace(data, skipSpace(data, end)+1) // past the ':'
		if i >= len(data) {
			return fields, ""
		}
		vEnd := valueEnd(data, i)
		if _, dup := fields[key]; dup {
			return fields, key
		}
		fields[key] = data[i:vEnd:vEnd]
		i = skipSpace(data, vEnd)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return fields, ""
}

// jsonString decodes raw, one JSON string; as json.Unmarshal does, but
// without it where the string holds no escape.
func jsonString(raw []byte) (string, error) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		plain := true
		for _, b := range raw[1 : len(raw)-1] {
			if b == '\\' || b == '"' || b < 0x20 {
				plain = false
				break
			}
		}
		if plain && utf8.Valid(raw) {
			return string(raw[1 : len(raw)-1]), nil
		}
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd is the index just past the string that opens at data[i].
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(data)
}

// valueEnd is the index just past the value that starts at data[i], in
// valid JSON.
func valueEnd(data []byte, i int) int {
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				j = stringEnd(data, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(data)
	}
	j := i
	for j < len(data) {
		switch data[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j
		}
		j++
	}
	return j
}
