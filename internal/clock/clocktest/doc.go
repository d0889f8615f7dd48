// Package clocktest is a clock.Clock that tests move by hand.
package clocktest
