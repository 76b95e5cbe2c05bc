"""The jail a call's subprocesses get under the settings: no network (a proxy when some
hosts are allowed) and the platform's state directory hidden."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from toolrun.config import Settings
from toolrun.sandbox.network import NetworkJail, NetworkPolicy, isolation_problem
from toolrun.sandbox.proxy import AllowlistProxy, Refusal


def network_problem(settings: Settings) -> str | None:
    """Why tool subprocesses would have the host's network, or None when they are jailed."""
    if settings.network_isolation == "off":
        return "turned off (TOOLRUN_NETWORK_ISOLATION=off)"
    problem = isolation_problem()
    return None if problem is None else f"unavailable on this host: {problem}"


@contextmanager
def call_network(
    settings: Settings, on_refused: Callable[[Refusal], None]
) -> Iterator[NetworkJail | None]:
    """The jail for one call's subprocesses (None: unconfined, see `network_problem`), with
    an allowlisting proxy serving it while the call runs."""
    hidden = (settings.platform_home,)  # the platform's own secrets stay out of reach
    if network_problem(settings) is not None:
        yield None
    elif not settings.network_allowlist:
        yield NetworkJail(hidden=hidden)
    else:
        policy = NetworkPolicy(tuple(settings.network_allowlist))
        with AllowlistProxy(policy, on_refused) as socket_path:
            yield NetworkJail(socket_path, hidden=hidden)
