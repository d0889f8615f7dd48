// Package report formats areas.
package report

import (
	"fmt"

	"example.com/shapes/shapes"
)

// Report prints the total area. TotalArea is mentioned in this comment.
func Report(all []shapes.Shape) string {
	return fmt.Sprintf("%.2f %s", shapes.TotalArea(all), shapes.Unit)
}

// Largest returns the largest area.
func Largest(all []shapes.Shape) float64 {
	best := 0.0
	for _, s := range all {
		if a := s.Area(); a > best {
			best = a
		}
	}
	_ = shapes.TotalArea
	return best
}
