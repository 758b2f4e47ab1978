"""An FTP server on 127.0.0.1 (pyftpdlib, in a thread of the test process) with one user whose
home is a local folder: pyfile reaches it through fsspec's FTP filesystem, Spark's own readers
through Hadoop's FTPFileSystem, and a test reads what was written straight from the folder.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["FtpServer", "serving_ftp"]


@dataclass(frozen=True)
class FtpServer:
    host: str
    port: int
    user: str
    password: str
    home: Path

    def url(self, path: str) -> str:
        """``ftp://user:password@host:port/path``: the credentials in the URL, as tested."""
        return f"ftp://{self.user}:{self.password}@{self.host}:{self.port}/{path.lstrip('/')}"

    def __repr__(self) -> str:
        return f"FtpServer({self.host}:{self.port})"


@contextlib.contextmanager
def serving_ftp(home: Path, user: str, password: str) -> Iterator[FtpServer]:
    from pyftpdlib.authorizers import DummyAuthorizer
    from pyftpdlib.handlers import FTPHandler
    from pyftpdlib.servers import ThreadedFTPServer

    authorizer = DummyAuthorizer()
    authorizer.add_user(user, password, str(home), perm="elradfmwMT")

    class Handler(FTPHandler):  # type: ignore[misc]
        pass

    Handler.authorizer = authorizer
    Handler.passive_ports = None
    server = ThreadedFTPServer(("127.0.0.1", 0), Handler)
    server.max_cons = 64
    port = server.socket.getsockname()[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"timeout": 0.2}, daemon=True)
    thread.start()
    try:
        yield FtpServer("127.0.0.1", port, user, password, home)
    finally:
        server.close_all()
        thread.join(10)
