"""FlowState's memory as an MCP server (`flowstate mcp`): the host's model emits the steps,
FlowState checks and stores them through the session API, and calls no model of its own."""
