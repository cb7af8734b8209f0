"""MCP over the registry's operations, with the official `mcp` SDK (its low-level `Server`).

- `tools`: one MCP tool per registry route with a tool name (Dory's `dory_*`), with the
  same input schema as `/v1/tools`; a call validates and runs the same operation.
- `resources`: the corpus's markdown documents, listed and read by corpus path.
- `prompts`: the wake block (`/v1/wake`) as the `wake` prompt.
- `backend`: where an operation runs: this process's corpus (opened in the background,
  so `initialize` answers at once) or a running `commonplace serve` for the corpus.
- `server`: the SDK `Server` wired to the three above.
- `stdio`: `commonplace mcp` (stdout carries only protocol).
- `http`: `/mcp` inside `commonplace serve` (streamable HTTP, behind the API's tokens).
"""
