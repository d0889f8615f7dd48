package main

func main() { notDefined() }
