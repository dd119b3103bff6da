"""The listening socket `zen serve` hands to uvicorn: the connections it accepts must send at once
(TCP_NODELAY). asyncio sets that only on sockets whose protocol says TCP; a socket made with
proto 0 left Nagle on, and every small answer written in two parts (headers, then body: a 401,
a 404, an SSE event) waited ~40 ms for the client's delayed ACK."""

from __future__ import annotations

import asyncio
import socket

from zen.server.run import _bind


async def _accepted_nodelay(sock: socket.socket) -> int:
    loop = asyncio.get_running_loop()
    got: asyncio.Future[int] = loop.create_future()

    class Probe(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            conn = transport.get_extra_info("socket")
            got.set_result(int(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)))

    server = await loop.create_server(Probe, sock=sock)  # as uvicorn does with sockets=[sock]
    try:
        host, port = sock.getsockname()[:2]
        _, writer = await asyncio.open_connection(host, port)
        try:
            return await asyncio.wait_for(got, 10)
        finally:
            writer.close()
    finally:
        server.close()
        await server.wait_closed()


def test_connections_accepted_on_the_served_socket_have_nagle_off() -> None:
    sock = _bind("127.0.0.1", 0)
    try:
        assert asyncio.run(_accepted_nodelay(sock)) != 0
    finally:
        sock.close()
