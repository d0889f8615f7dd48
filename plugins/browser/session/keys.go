package session

import (
	"context"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/yagent/yagent/sdk"
)

// keyNames maps lowercased DOM key names (enter, arrowdown, f5, ...) and a
// few common aliases to the runes chromedp's kb package encodes. Built
// once, never changed.
var keyNames = sync.OnceValue(func() map[string]rune {
	m := map[string]rune{}
	for r, k := range kb.Keys {
		if k == nil || utf8.RuneCountInString(k.Key) <= 1 {
			continue
		}
		name := strings.ToLower(k.Key)
		if old, ok := m[name]; !ok || r < old {
			m[name] = r
		}
	}
	for alias, r := range map[string]rune{
		"return": '\r', "esc": '\u001b', "space": ' ', "spacebar": ' ', "del": '\u007f',
		"up": mustRune(kb.ArrowUp), "down": mustRune(kb.ArrowDown), "left": mustRune(kb.ArrowLeft), "right": mustRune(kb.ArrowRight),
		"pgup": mustRune(kb.PageUp), "pgdn": mustRune(kb.PageDown), "ins": mustRune(kb.Insert),
	} {
		m[alias] = r
	}
	return m
})

func mustRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// modifierKeys maps modifier names to their bit and their key.
var modifierKeys = map[string]struct {
	bit kb.Modifier
	key string
}{
	"control": {kb.ModifierCtrl, kb.Control}, "ctrl": {kb.ModifierCtrl, kb.Control},
	"shift": {kb.ModifierShift, kb.Shift},
	"alt":   {kb.ModifierAlt, kb.Alt}, "option": {kb.ModifierAlt, kb.Alt},
	"meta": {kb.ModifierMeta, kb.Meta}, "cmd": {kb.ModifierMeta, kb.Meta}, "command": {kb.ModifierMeta, kb.Meta},
}

// parseKey splits a combination like "Control+Shift+ArrowLeft" into its
// modifiers and the key's rune.
func parseKey(combo string) (mods []string, key rune, err error) {
	combo = strings.TrimSpace(combo)
	parts := strings.Split(combo, "+")
	if strings.HasSuffix(combo, "++") || combo == "+" {
		parts = append(strings.Split(strings.TrimSuffix(combo, "++"), "+"), "+")
		if combo == "+" {
			parts = []string{"+"}
		}
	}
	last := parts[len(parts)-1]
	for _, p := range parts[:len(parts)-1] {
		if _, ok := modifierKeys[strings.ToLower(strings.TrimSpace(p))]; !ok {
			return nil, 0, badKey(combo, "%q is not a modifier (Control, Shift, Alt, Meta)", p)
		}
		mods = append(mods, strings.ToLower(strings.TrimSpace(p)))
	}
	if utf8.RuneCountInString(last) == 1 {
		r, _ := utf8.DecodeRuneInString(last)
		return mods, r, nil
	}
	name := strings.ToLower(strings.TrimSpace(last))
	if r, ok := keyNames()[name]; ok {
		return mods, r, nil
	}
	if m, ok := modifierKeys[name]; ok && len(mods) == 0 {
		return nil, mustRune(m.key), nil
	}
	return nil, 0, badKey(combo, "unknown key %q", last)
}

func badKey(combo, format string, args ...any) error {
	te := sdk.Errorf(sdk.CodeInvalidInput, format, args...)
	te.Message = "key " + quoteLine(combo, 60) + ": " + te.Message +
		"; use a key name such as Enter, Tab, Escape, Backspace, ArrowDown, PageDown, Home, F5, one character, or a combination such as Control+a"
	return te
}

// pressKeys presses combo: modifiers down, the key down and up, modifiers
// up.
func pressKeys(a context.Context, combo string) error {
	mods, key, err := parseKey(combo)
	if err != nil {
		return err
	}
	var bits kb.Modifier
	send := func(p *input.DispatchKeyEventParams) error {
		_, err := chromedp.Call(a, input.DispatchKeyEvent, *p)
		return err
	}
	for _, name := range mods {
		m := modifierKeys[name]
		bits |= m.bit
		down := kb.Encode(mustRune(m.key))[0]
		down.Modifiers = int64(bits)
		if err := send(down); err != nil {
			return err
		}
	}
	for _, ev := range kb.Encode(key) {
		ev.Modifiers |= int64(bits)
		if ev.Type == kb.KeyChar && bits&^kb.ModifierShift != 0 {
			continue // a shortcut types nothing
		}
		if err := send(ev); err != nil {
			return err
		}
	}
	for i := len(mods) - 1; i >= 0; i-- {
		m := modifierKeys[mods[i]]
		evs := kb.Encode(mustRune(m.key))
		up := evs[len(evs)-1]
		bits &^= m.bit
		up.Modifiers = int64(bits)
		if err := send(up); err != nil {
			return err
		}
	}
	return nil
}
