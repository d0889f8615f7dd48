package session

import (
	"errors"

	"github.com/chromedp/cdproto"
)

// asCDP reports whether err is (or wraps) an error the browser returned.
func asCDP(err error, target **cdproto.Error) bool {
	return errors.As(err, target)
}
