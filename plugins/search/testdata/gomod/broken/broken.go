// Package broken does not compile.
package broken

func UsesTotalArea() int { return undefinedThing + TotalArea }
