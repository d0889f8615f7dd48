package session

import (
	"context"
	"fmt"
	"strings"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/yagent/yagent/sdk"
)

// TabInfo describes one open tab.
type TabInfo struct {
	Index   int    `json:"index"`
	Current bool   `json:"current"`
	URL     string `json:"url"`
	Title   string `json:"title"`
}

// Tabs lists the session's tabs.
func (s *Session) Tabs(ctx context.Context) (*sdk.Result, error) {
	list, err := s.tabInfos(ctx)
	if err != nil {
		return nil, err
	}
	return &sdk.Result{Text: "### Open tabs\n" + formatTabs(list), Data: map[string]any{"tabs": list}}, nil
}

func (s *Session) tabInfos(ctx context.Context) ([]TabInfo, error) {
	infos, err := s.pageTargets(ctx)
	if err != nil {
		return nil, s.explain(ctx, fmt.Errorf("list the tabs: %w", err))
	}
	out := make([]TabInfo, 0, len(s.tabs))
	for i, t := range s.tabs {
		ti := TabInfo{Index: i, Current: i == s.cur}
		if info := infos[t.ID()]; info != nil {
			ti.URL, ti.Title = info.URL, info.Title
		}
		out = append(out, ti)
	}
	return out, nil
}

func formatTabs(list []TabInfo) string {
	var b strings.Builder
	for _, t := range list {
		fmt.Fprintf(&b, "- %d:", t.Index)
		if t.Current {
			b.WriteString(" (current)")
		}
		title := t.Title
		if title == "" {
			title = "untitled"
		}
		fmt.Fprintf(&b, " [%s] (%s)\n", title, t.URL)
	}
	return strings.TrimRight(b.String(), "\n")
}

// NewTab opens a tab, makes it current and, when url is set, loads it.
func (s *Session) NewTab(ctx context.Context, url string) (*sdk.Result, error) {
	t, err := s.openTab(ctx)
	if err != nil {
		return nil, s.explain(ctx, err)
	}
	s.tabs = append(s.tabs, t)
	s.cur = len(s.tabs) - 1
	lead := fmt.Sprintf("Opened tab %d.", s.cur)
	var info PageInfo
	if url != "" {
		status, err := s.load(ctx, t, url)
		if err != nil {
			return nil, err
		}
		info.Status = status
		lead = fmt.Sprintf("Opened tab %d at %s.", s.cur, url)
	}
	return s.withSnapshot(ctx, lead, info)
}

// SelectTab makes tab i current.
func (s *Session) SelectTab(ctx context.Context, i int) (*sdk.Result, error) {
	if err := s.checkIndex(i); err != nil {
		return nil, err
	}
	s.cur = i
	s.front(ctx, s.tabs[i])
	return s.withSnapshot(ctx, fmt.Sprintf("Selected tab %d.", i), PageInfo{})
}

// CloseTab closes tab i (the current one when i < 0). The last tab stays:
// browser_close closes the browser.
func (s *Session) CloseTab(ctx context.Context, i int) (*sdk.Result, error) {
	if i < 0 {
		i = s.cur
	}
	if err := s.checkIndex(i); err != nil {
		return nil, err
	}
	if len(s.tabs) == 1 {
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "tab %d is the last tab; to close the browser use browser_close", i)
	}
	t := s.tabs[i]
	if t.root {
		// Cancelling the first tab's context would stop the browser: close
		// its target through the browser instead.
		a, cancel := s.bounded(ctx, s.rootCtx)
		_, err := chromedp.CallBrowser(a, target.CloseTarget, target.CloseTargetParams{TargetID: t.ID()})
		cancel()
		if err != nil {
			return nil, s.explain(ctx, fmt.Errorf("close tab %d: %w", i, err))
		}
	} else {
		t.cancel()
	}
	s.dropTab(i)
	list, err := s.tabInfos(ctx)
	if err != nil {
		return nil, err
	}
	return &sdk.Result{
		Text: fmt.Sprintf("Closed tab %d; tab %d is current.\n\n### Open tabs\n%s", i, s.cur, formatTabs(list)),
		Data: map[string]any{"tabs": list},
	}, nil
}

func (s *Session) checkIndex(i int) error {
	if i < 0 || i >= len(s.tabs) {
		return sdk.Errorf(sdk.CodeInvalidInput, "there is no tab %d: the tabs are 0 to %d (browser_tabs with action list shows them)", i, len(s.tabs)-1)
	}
	return nil
}
