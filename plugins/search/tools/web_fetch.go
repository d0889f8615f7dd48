package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/yagent/yagent/plugins/search/internal/fetch"
	"github.com/yagent/yagent/sdk"
)

//go:embed web_fetch.md
var webFetchDescription string

type webFetchInput struct {
	URL      string `json:"url" jsonschema:"The http or https URL to fetch."`
	MaxBytes int    `json:"max_bytes,omitempty" jsonschema:"Most bytes to read from the response (default and maximum 5 MB)."`
}

// WebFetch returns the web_fetch tool.
func WebFetch(cfg Config) sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        "web_fetch",
		Description: webFetchDescription,
		Brief:       "Fetch a web page as Markdown.",
		Effect:      sdk.EffectNetwork,
		ReadOnly:    true,
		Roles:       map[string]sdk.Role{"url": sdk.RoleURL},
	}, func(ctx context.Context, in webFetchInput) (*sdk.Result, error) {
		return runWebFetch(ctx, cfg, in)
	})
}

func runWebFetch(ctx context.Context, cfg Config, in webFetchInput) (*sdk.Result, error) {
	opts := fetch.Options{}
	if cfg.Fetch != nil {
		opts = *cfg.Fetch
	}
	limit := opts.MaxBytes
	if limit <= 0 {
		limit = fetch.DefaultMaxBytes
	}
	var notes []sdk.Note
	switch {
	case in.MaxBytes < 0:
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "max_bytes %d is negative; leave it out for the default of %d", in.MaxBytes, limit)
	case in.MaxBytes > 0 && int64(in.MaxBytes) < limit:
		opts.MaxBytes = int64(in.MaxBytes)
	case int64(in.MaxBytes) > limit:
		notes = append(notes, sdk.Note{Kind: "clamped", Detail: fmt.Sprintf("max_bytes %d lowered to %d", in.MaxBytes, limit)})
		opts.MaxBytes = limit
	}
	page, err := fetch.Fetch(ctx, in.URL, opts)
	var se *fetch.StatusError
	var other *fetch.OtherHostError
	switch {
	case errors.As(err, &other):
		return nil, &sdk.ToolError{Code: "redirect_other_host", Data: other,
			Message: fmt.Sprintf("%v. web_fetch does not follow a redirect to another host, so that access to it is checked: call web_fetch with url %q to follow it", other, other.To)}
	case errors.As(err, &se):
		return nil, &sdk.ToolError{Code: "http_error",
			Message: fmt.Sprintf("%s; what it sent:\n%s", se.Error(), head(se.Page.Content, 2000)), Data: se.Page}
	case errors.Is(err, fetch.ErrScheme):
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "%v; give an absolute http:// or https:// URL (use read_file for local files)", err)
	case errors.Is(err, fetch.ErrRedirects):
		return nil, sdk.Errorf(sdk.CodeToolFailed, "%v; fetch the last URL directly if you trust it", err)
	case errors.Is(err, fetch.ErrNotText):
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "%v; web_fetch returns text and HTML only", err)
	case errors.Is(err, fetch.ErrTimeout):
		return nil, sdk.Errorf(sdk.CodeTimeout, "%v; the server may be slow or the page too large", err)
	case err != nil:
		return nil, toolError(err)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "URL: %s\n", page.URL)
	if len(page.Redirects) > 0 {
		fmt.Fprintf(&b, "Redirected from: %s\n", strings.Join(page.Redirects, " -> "))
	}
	if page.Title != "" {
		fmt.Fprintf(&b, "Title: %s\n", page.Title)
	}
	fmt.Fprintf(&b, "Content-Type: %s\n\n", page.ContentType)
	b.WriteString(page.Content)
	b.WriteByte('\n')
	if page.Truncated {
		detail := fmt.Sprintf("the page was cut at %d bytes", page.Bytes)
		fmt.Fprintf(&b, "\n[%s; the rest was not read]\n", detail)
		notes = append(notes, sdk.Note{Kind: "truncated", Detail: detail})
	}
	if len(page.Redirects) > 0 {
		notes = append(notes, sdk.Note{Kind: "redirected", Detail: page.URL})
	}
	return &sdk.Result{Text: b.String(), Data: page, Notes: notes}, nil
}

func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + " …"
}

func isRuneStart(c byte) bool { return c&0xC0 != 0x80 }
