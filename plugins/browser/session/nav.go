package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/yagent/yagent/sdk"
)

// Navigate loads url in the current tab and returns its snapshot.
func (s *Session) Navigate(ctx context.Context, url string) (*sdk.Result, error) {
	t := s.current()
	status, err := s.load(ctx, t, url)
	if err != nil {
		return nil, err
	}
	return s.withSnapshot(ctx, "Navigated to "+url+".", PageInfo{Status: status})
}

// load navigates t to url and waits for the page to load; it returns the
// HTTP status of the document.
func (s *Session) load(ctx context.Context, t *Tab, url string) (int64, error) {
	a, cancel := s.bounded(ctx, t.ctx)
	defer cancel()
	t.forgetLoading()
	resp, err := chromedp.Run(a, chromedp.NavigateResponse(url))
	if err != nil {
		var le *chromedp.LoadError
		if errors.As(err, &le) {
			return 0, sdk.Errorf(CodeNavigationFailed, "could not load %s: %s (check the URL, or that the server is up)", url, le.ErrorText)
		}
		return 0, s.explain(ctx, fmt.Errorf("navigate to %s: %w", url, err))
	}
	if resp == nil {
		return 0, nil
	}
	return resp.Status, nil
}

// Back goes back in the current tab's history and returns the snapshot.
func (s *Session) Back(ctx context.Context) (*sdk.Result, error) {
	t := s.current()
	a, cancel := s.bounded(ctx, t.ctx)
	defer cancel()
	h, err := chromedp.Call(a, page.GetNavigationHistory, cdp.Empty{})
	if err != nil {
		return nil, fmt.Errorf("read the tab's history: %w", err)
	}
	if h.CurrentIndex <= 0 || int(h.CurrentIndex) >= len(h.Entries) {
		return nil, sdk.Errorf(sdk.CodeNotFound, "there is no previous page in this tab's history")
	}
	prev := h.Entries[h.CurrentIndex-1]
	t.forgetLoading()
	if err := chromedp.Do(a, chromedp.NavigateToHistoryEntry(prev.ID)); err != nil {
		return nil, s.explain(ctx, fmt.Errorf("go back to %s: %w", prev.URL, err))
	}
	return s.withSnapshot(ctx, "Went back to "+prev.URL+".", PageInfo{})
}
