// Command weft is the weft CLI; see package starter.
package main

import "github.com/weftworks/weft/starter"

func main() { starter.Main() }
