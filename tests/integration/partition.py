"""A TCP forwarder in front of the real apiserver that can cut the network: every open connection is closed and
new ones are refused until it heals. TLS passes through untouched, so a kubeconfig only changes its port."""
from __future__ import annotations

import copy
import socket
import threading
from pathlib import Path
from urllib.parse import urlsplit

import yaml


class Partition:
    def __init__(self, kubeconfig: Path) -> None:
        self.config = yaml.safe_load(kubeconfig.read_text())
        server = urlsplit(self.config["clusters"][0]["cluster"]["server"])
        self.upstream = (server.hostname or "127.0.0.1", server.port or 443)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.open: list[socket.socket] = []
        self.lock = threading.Lock()
        self.cut_off = False
        threading.Thread(target=self._accept, daemon=True).start()

    def kubeconfig(self, path: Path) -> Path:
        config = copy.deepcopy(self.config)
        config["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{self.port}"
        path.write_text(yaml.safe_dump(config))
        return path

    def cut(self) -> None:
        with self.lock:
            self.cut_off = True
            for sock in self.open:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()
            self.open.clear()

    def heal(self) -> None:
        with self.lock:
            self.cut_off = False

    def close(self) -> None:
        self.cut()
        self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _addr = self.listener.accept()
            except OSError:
                return
            with self.lock:
                if self.cut_off:
                    client.close()
                    continue
                upstream = socket.create_connection(self.upstream)
                self.open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                try:
                    sock.close()
                except OSError:
                    pass
