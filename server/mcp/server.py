"""The SDK's low-level `Server`, wired to the tools, resources and prompt over a backend.

The SDK does the protocol (initialize or discover, JSON-RPC, cancellation, both protocol
eras); the handlers here only translate. Every operation blocks (disk, index, model), so
it runs in a worker thread; a cancelled request waits for its thread to finish rather
than abandon a write half-way (the write is atomic either way; this keeps the corpus's
refresh in step with what is on disk).
"""

from __future__ import annotations

from typing import Any, Callable

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from . import prompts, resources, tools
from .backend import Backend

NAME = "commonplace"
INSTRUCTIONS = (
    "commonplace is a markdown memory wiki. At the start of a session call dory_wake once (or use the "
    "`wake` prompt) and read its block. Before answering from memory, dory_search, then dory_get the "
    "best paths (with `from`/`lines` from a result's line range). Record durable facts with "
    "dory_memory_write and edit documents with dory_write. Documents are also resources: "
    "commonplace:///<corpus path>."
)

ActorOf = Callable[[ServerRequestContext[Any, Any]], "str | None"]


def _no_actor(ctx: ServerRequestContext[Any, Any]) -> str | None:
    return None


def build_server(backend: Backend, actor_of: ActorOf = _no_actor,
                 on_initialized: Callable[[], None] | None = None) -> Server[Any]:
    """An SDK server answering tools, resources and prompts from `backend`. `actor_of`
    names the caller of a request (the token's name over HTTP); `on_initialized` runs
    once the client has its `initialize` answer (stdio opens the corpus then, so that
    the open does not compete with the handshake for the interpreter)."""
    from commonplace.compiler import __version__

    async def list_tools(ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
                         ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=list(tools.tool_list()))

    async def call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
                        ) -> types.CallToolResult:
        actor = actor_of(ctx)
        return await anyio.to_thread.run_sync(tools.call_tool, backend, params.name, params.arguments, actor)

    async def list_resources(ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
                             ) -> types.ListResourcesResult:
        cursor = params.cursor if params is not None else None
        return await anyio.to_thread.run_sync(resources.list_page, backend, cursor)

    async def list_templates(ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
                             ) -> types.ListResourceTemplatesResult:
        return resources.templates()

    async def read_resource(ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
                            ) -> types.ReadResourceResult:
        actor = actor_of(ctx)
        return await anyio.to_thread.run_sync(resources.read, backend, params.uri, actor)

    async def list_prompts(ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
                           ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=list(prompts.prompt_list()))

    async def get_prompt(ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
                         ) -> types.GetPromptResult:
        actor = actor_of(ctx)
        return await anyio.to_thread.run_sync(prompts.get, backend, params.name, params.arguments, actor)

    server: Server[Any] = Server(
        NAME,
        version=__version__,
        title="commonplace memory",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )
    if on_initialized is not None:
        hook = on_initialized

        async def initialized(ctx: ServerRequestContext[Any, Any], params: types.NotificationParams) -> None:
            hook()

        server.add_notification_handler("notifications/initialized", types.NotificationParams, initialized)
    return server
