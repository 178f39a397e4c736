// Command barestdio is the yardstick for Arrowhead's stdio start-up: an
// mcp-go stdio server with one trivial tool and nothing else (no settings,
// no guard chain, no adapters). BenchmarkStdioStartup runs it alternately
// with the arrowhead binary; start-up is budgeted relative to it.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	s := server.NewMCPServer("barestdio", "1", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo",
		mcp.WithDescription("Echo the text back."),
		mcp.WithString("text", mcp.Required(), mcp.Description("Text to echo.")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(req.GetString("text", "")), nil
	})
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, "barestdio:", err)
		os.Exit(1)
	}
}
