"""The compact form of the memory tools, for every shell that gives a model FlowState's tools
(the MCP server, the framework adapters): their arguments and results as pydantic models
(`schemas`), long results cut into pages (`paging`), and the front door's answers rendered as
those results and as short text (`render`). Pure: no I/O, no MCP SDK."""
