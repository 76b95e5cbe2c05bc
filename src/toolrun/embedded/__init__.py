"""The embedded platform: a private Redis and the toolrun processes on one machine."""

from toolrun.embedded.redis_server import RedisServer, find_redis_server
from toolrun.embedded.supervisor import Supervisor, terminate

__all__ = ["RedisServer", "Supervisor", "find_redis_server", "terminate"]
