package mcp

import weftclient "github.com/weftworks/weft/client"

// UseClient makes the gateway use c instead of dialling Temporal (a fake's runs).
func (g *Gateway) UseClient(c *weftclient.Client) { g.client = c }
