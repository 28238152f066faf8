package main

import "github.com/weftworks/weft/starter"

func main() { starter.Main() }
