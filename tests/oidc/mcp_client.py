"""Call one tool of `fluxfleet mcp --listen … --oauth-issuer …` the way a real MCP client does.

The client is the official MCP Python SDK (requirements.txt), not code of ours: it is told where to
get a token by the server itself. Its first request goes without one; the server answers 401 with
`WWW-Authenticate: Bearer resource_metadata="…"`; the SDK reads that RFC 9728 document (the resource
and its authorization server), then the authorization server's metadata, asks its token endpoint
for a token (the client_credentials grant, with the resource indicator), and sends the request
again with it. Then the MCP handshake and the tool call.

Inputs, each an option or else an environment variable:
  --url            MCP_URL            the server's MCP endpoint, http://127.0.0.1:PORT/mcp; it must be
                                      the `resource` of the server's metadata (its --oauth-audience),
                                      or the SDK stops
  --client-id      MCP_CLIENT_ID      a client of the OpenID provider (alice, bob, assistant-N)
  --client-secret  MCP_CLIENT_SECRET  its secret
  --issuer         MCP_ISSUER         the provider the credentials belong to: the SDK then sends them
                                      nowhere else (optional, but without it the SDK warns on stderr)
  --scope          MCP_SCOPE          optional: ask for exactly these scopes, every time. Without it
                                      the SDK chooses: the scope of the server's challenge, else all
                                      of the metadata's scopes_supported
  --tool           MCP_TOOL           the tool to call (default fleet_summary)
  --arguments      MCP_ARGUMENTS      its arguments, a JSON object (default {})
  --mode           MCP_MODE           legacy (the initialize handshake, the default) or auto (the
                                      SDK's default: `server/discover` first)
MCP_CLIENT_TRACE=1 prints every HTTP request and response to stderr.

Prints the tool's result (the SDK's CallToolResult as JSON, camelCase as on the wire) on stdout. Exits 1, saying why on
stderr, when anything fails, the tool's own error (isError) included.
"""

import argparse
import asyncio
import json
import logging
import os
import sys

import httpx2  # the SDK's HTTP client, installed with it
from mcp import Client
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client


class NoStorage:
    """Tokens live only as long as this process: every run gets its own."""

    tokens = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return None

    async def set_client_info(self, client_info):
        pass


class FixedScope(ClientCredentialsOAuthProvider):
    """With --scope, every token request asks for exactly that scope: the SDK would otherwise
    replace it with the server's challenge (the way to test a token that lacks a scope)."""

    def __init__(self, *args, fixed_scope, **kwargs):
        super().__init__(*args, **kwargs)
        self.fixed_scope = fixed_scope

    async def _perform_authorization(self):
        if self.fixed_scope:
            self.context.client_metadata.scope = self.fixed_scope
        return await super()._perform_authorization()


def options():
    env = os.environ.get
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=env("MCP_URL"))
    parser.add_argument("--client-id", default=env("MCP_CLIENT_ID"))
    parser.add_argument("--client-secret", default=env("MCP_CLIENT_SECRET"))
    parser.add_argument("--issuer", default=env("MCP_ISSUER"))
    parser.add_argument("--scope", default=env("MCP_SCOPE"))
    parser.add_argument("--tool", default=env("MCP_TOOL", "fleet_summary"))
    parser.add_argument("--arguments", default=env("MCP_ARGUMENTS", "{}"))
    parser.add_argument("--mode", default=env("MCP_MODE", "legacy"))
    args = parser.parse_args()
    for name in ("url", "client_id", "client_secret"):
        if not getattr(args, name):
            parser.error(f"--{name.replace('_', '-')} (or MCP_{name.upper()}) is needed")
    return args


async def main(args, last_refusal):
    auth = FixedScope(
        args.url,
        NoStorage(),
        args.client_id,
        args.client_secret,
        issuer=args.issuer,
        fixed_scope=args.scope,
    )

    # The transport reports a 401 or 403 only as "Server returned an error response": keep the
    # refusal, with its WWW-Authenticate, to say what went wrong (until a later response succeeds).
    async def on_response(response):
        last_refusal[0] = None
        if response.status_code >= 400:
            challenge = response.headers.get("www-authenticate", "")
            last_refusal[0] = f"{response.request.method} {response.request.url}: {response.status_code} {challenge}"
        if os.environ.get("MCP_CLIENT_TRACE"):
            request = response.request
            print(f"{request.method} {request.url} -> {response.status_code}", file=sys.stderr)

    async with httpx2.AsyncClient(auth=auth, timeout=60, event_hooks={"response": [on_response]}) as http:
        async with Client(streamable_http_client(args.url, http_client=http), mode=args.mode) as client:
            result = await client.call_tool(args.tool, json.loads(args.arguments))
    print(json.dumps(result.model_dump(mode="json", by_alias=True, exclude_none=True)))
    if result.is_error:
        raise RuntimeError(f"the tool {args.tool} answered with an error")


def leaves(error):
    """The errors inside the task groups' ExceptionGroups, which say what actually failed."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


if __name__ == "__main__":
    args = options()
    # The SDK logs a failed OAuth flow with its traceback; the error printed below says it in a line.
    logging.getLogger("mcp").addHandler(logging.NullHandler())
    last_refusal = [None]
    try:
        asyncio.run(main(args, last_refusal))
    except BaseException as error:  # noqa: BLE001 - any failure is reported and exits 1
        for leaf in leaves(error):
            print(f"mcp_client: {type(leaf).__name__}: {leaf}", file=sys.stderr)
        if last_refusal[0]:
            print(f"mcp_client: last refusal: {last_refusal[0]}", file=sys.stderr)
        sys.exit(1)
