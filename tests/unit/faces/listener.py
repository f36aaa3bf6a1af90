"""A stand-in API server that answers nothing and counts the connections it is offered: a face test that points a
module at it proves the module refused its input before any request reached a cluster."""
from __future__ import annotations

import socket
import threading


class Listener:
    """A local TCP server that counts the connections it is offered and answers none."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = int(self.sock.getsockname()[1])
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _addr = self.sock.accept()
            except OSError:  # closed
                return
            self.connections += 1
            conn.close()
