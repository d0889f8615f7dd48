// Package clock is the time seen by code that reports on a schedule (the
// tools' progress), so that tests can drive it without sleeping.
package clock
