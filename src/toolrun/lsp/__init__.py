"""A Language Server Protocol client: servers over stdio, kept warm per workspace."""

from __future__ import annotations

from toolrun.lsp.pool import ServerPool
from toolrun.lsp.servers import ServerSpec, language_of, server_for
from toolrun.lsp.session import LspSession

__all__ = ["LspSession", "ServerPool", "ServerSpec", "language_of", "server_for"]
