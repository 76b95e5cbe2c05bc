"""toolrun and the ecosystem: export formats, model tool calls, MCP server and gateway."""
