"""Adapters: stalwart's guarantees for agents written for other frameworks.

One module per framework, each thin over the public guarded-run API (`stalwart.guarded`),
each behind its own extra; the framework is imported only there:

- `stalwart.adapters.pydantic_ai` (`pip install stalwart[pydantic-ai]`): a Pydantic AI
  capability, `StalwartGuard`, and its driver, `StalwartDriver`.
- `stalwart.adapters.langgraph` (`pip install stalwart[langgraph]`): a LangChain v1
  middleware for `create_agent` (or a hand-built graph's `ToolNode`), `StalwartMiddleware`,
  and its driver, `StalwartDriver`.
- `stalwart.adapters.openai_agents` (`pip install stalwart[openai-agents]`): a tool factory
  for the OpenAI Agents SDK, `StalwartTools`, and its driver, `StalwartDriver`.
"""
