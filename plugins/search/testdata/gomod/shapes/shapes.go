// Package shapes computes areas.
package shapes

import "math"

// Shape is anything with an area.
type Shape interface {
	Area() float64
}

// Circle is a round shape.
type Circle struct {
	R float64
}

// Area returns the circle's area.
func (c Circle) Area() float64 {
	return math.Pi * c.R * c.R
}

// Square is a four-sided shape.
type Square struct {
	Side float64
}

// Area returns the square's area.
func (s *Square) Area() float64 {
	return s.Side * s.Side
}

// TotalArea adds up the areas of shapes.
func TotalArea(shapes []Shape) float64 {
	total := 0.0
	for _, s := range shapes {
		total += s.Area()
	}
	return total
}

// Unit is the unit of every area.
const Unit = "m2"

// Default is the shape used when none is given.
var Default = Circle{R: 1}
