package sdk

// Result is what a tool returns on success.
type Result struct {
	// Text is what the model reads.
	Text string
	// Data is structured output; it must be JSON-serializable.
	Data any
	// Images are returned as image content to clients that show them.
	Images []Image
	// Notes name what the tool did beyond the literal request: a relaxed
	// match, a line-ending conversion, a re-indentation.
	Notes []Note
}

// Image is an image produced by a tool, such as a screenshot.
type Image struct {
	MIMEType string `json:"mime_type"`
	Data     []byte `json:"-"`
	// Path is where the image was written, relative to the workspace.
	Path string `json:"path,omitempty"`
}

// Note records one thing a tool did that the model should know about.
type Note struct {
	// Kind is a stable word, such as "line_endings" or "whitespace_relaxed".
	Kind string `json:"kind"`
	// Detail says what exactly, such as "crlf-applied".
	Detail string `json:"detail,omitempty"`
}

// Progress is one progress event of a running call.
type Progress struct {
	Message  string  `json:"message,omitempty"`
	Progress float64 `json:"progress,omitempty"`
	Total    float64 `json:"total,omitempty"`
}
