"""FlowState at the seams of agent frameworks, each module installed by its own extra:
`flowstate.integrations.pydantic_ai` (a pydantic-ai capability, `[pydantic-ai]`),
`flowstate.integrations.langchain` (a LangChain agent middleware, `[langchain]`),
`flowstate.integrations.openai_agents` (a runner for the OpenAI Agents SDK, `[openai-agents]`)
and `flowstate.integrations.adk` (a Google ADK plugin and memory service, `[adk]`).

Each is thin over the front door, as the CLI and the MCP server are: a run of the framework's
agent is one FlowState request (`fs.begin` ... `session.commit`), its model gets the memory
tools of `flowstate.integrations.memory`, and every rule is the session's own.
"""
