package main

import (
	"fmt"

	"example.com/shapes/report"
	"example.com/shapes/shapes"
)

func main() {
	all := []shapes.Shape{shapes.Default, &shapes.Square{Side: 2}}
	fmt.Println(report.Report(all))
	TotalArea := 3 // a local that only shares the name
	fmt.Println(TotalArea)
}
