# Airlock's Python prelude: the functions the code calls. Prints and
# console output go to the logs; results travel on their own pipe (fd 3),
# so nothing the code or its children print can corrupt them.
# Modules the code may not need are imported when first used: the start of
# every execution pays for what it imports here.
import json as _json, os as _os, sys as _sys

_os.dup2(2, 1)  # stdout (of this process and its children) joins the logs
_sys.stdout = _sys.stderr
_SOCKET = _os.environ.pop("AIRLOCK_SOCKET", "")
_INSTALL = _os.environ.pop("AIRLOCK_ALLOW_INSTALL", "") == "1"
_MAX_CALLS = max(1, int(_os.environ.pop("AIRLOCK_MAX_CALLS", "8") or 8))
_MAX_OUTPUT = int(_os.environ.pop("AIRLOCK_MAX_OUTPUT", "0") or 0)
_RESULT = _os.fdopen(3, "w", encoding="utf-8")


def _forward_proxy(path, addr):
    """Serve the jail's proxy port: each connection goes on to the server's
    proxy on its socket (the jail has no other way out)."""
    import socket as _socket, threading as _threading
    host, port = addr.rsplit(":", 1)
    srv = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    srv.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
    srv.bind((host, int(port)))
    srv.listen(64)

    def pipe(src, dst):
        try:
            while True:
                data = src.recv(1 << 16)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            try:
                dst.shutdown(_socket.SHUT_WR)
            except OSError:
                pass

    def serve():
        while True:
            try:
                client, _ = srv.accept()
            except OSError:
                return
            up = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
            try:
                up.connect(path)
            except OSError:
                client.close()
                up.close()
                continue
            _threading.Thread(target=pipe, args=(client, up), daemon=True).start()
            _threading.Thread(target=pipe, args=(up, client), daemon=True).start()

    _threading.Thread(target=serve, daemon=True).start()


_PROXY_SOCKET = _os.environ.pop("AIRLOCK_PROXY_SOCKET", "")
_PROXY_ADDR = _os.environ.pop("AIRLOCK_PROXY_ADDR", "")
if _PROXY_SOCKET and _PROXY_ADDR:
    try:
        _forward_proxy(_PROXY_SOCKET, _PROXY_ADDR)
    except OSError:
        pass  # the port taken: the code has no way out, and is told by its client


def _ask(request):
    """Send one request to the server on the socket and return its answer."""
    import socket as _socket
    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        s.connect(_SOCKET)
        s.sendall((_json.dumps(request) + "\n").encode())
        buf = bytearray()
        while not buf.endswith(b"\n"):
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            buf += chunk
    finally:
        s.close()
    return _json.loads(buf or b"{}")


def _call(name, args):
    if not isinstance(name, str) or not name:
        raise TypeError("call_tool: the tool name must be a non-empty string")
    resp = _ask({"name": name, "args": {} if args is None else args})
    if resp.get("error"):
        raise RuntimeError("Tool '%s' failed: %s" % (name, resp["error"]))
    data = resp.get("data")
    if isinstance(data, str):
        try:
            return _json.loads(data)
        except ValueError:
            return data
    return data


def call_tool(name, args=None):
    """Call an agent tool and return its result (parsed JSON when it is JSON)."""
    return _call(name, args)


def call_tools_parallel(calls):
    """Call tools concurrently: calls is a list of (name, args); results keep the order."""
    calls = list(calls)
    if not calls:
        return []
    from concurrent.futures import ThreadPoolExecutor
    # The server answers at most _MAX_CALLS at once; more threads would wait.
    with ThreadPoolExecutor(max_workers=min(_MAX_CALLS, len(calls))) as pool:
        return list(pool.map(lambda c: _call(c[0], c[1] if len(c) > 1 else None), calls))


def set_result(data, files=None):
    """Set the structured result, and the workspace files to return (a name or a list)."""
    if isinstance(files, str):
        files = [files]
    line = _json.dumps({"data": data, "files": list(files or [])})
    if _MAX_OUTPUT and len(line) > _MAX_OUTPUT:
        raise ValueError("the result is %d bytes of JSON, over the output cap of %d bytes: return less, or write it to a file and declare the file" % (len(line), _MAX_OUTPUT))
    _RESULT.write(line + "\n")
    _RESULT.flush()


def install_package(name):
    """Install a package with pip into the workspace (if the server allows it); it is then importable."""
    if not _INSTALL:
        raise RuntimeError("install_package is disabled on this server (the operator enables it with --allow-install)")
    resp = _ask({"install": str(name), "manager": "pip"})
    if resp.get("error"):
        raise RuntimeError(resp["error"])
    _packages()
    import importlib
    importlib.invalidate_caches()


def _packages():
    target = _os.path.join(_os.getcwd(), ".packages")
    if _os.path.isdir(target) and target not in _sys.path:
        _sys.path.insert(1, target)


def _main(path):
    with open(path, encoding="utf-8") as f:
        source = f.read()
    # The code runs as a file of its workspace: imports of the workspace's
    # modules work, and __file__ names it there.
    here = _os.getcwd()
    name = _os.path.join(here, "main.py")
    _sys.path[0] = here
    _packages()
    scope = {"__name__": "__main__", "__file__": name, "__builtins__": __builtins__, "call_tool": call_tool,
             "call_tools_parallel": call_tools_parallel, "set_result": set_result, "install_package": install_package}
    try:
        exec(compile(source, name, "exec"), scope)
    except SystemExit:
        raise
    except BaseException as e:
        # The traceback starts at the code: the prelude's own frames on top
        # are left out.
        import traceback
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
            tb = tb.tb_next
        traceback.print_exception(type(e), e, tb)
        _sys.exit(1)


if __name__ == "__main__":
    _path = _sys.argv[1]
    _sys.argv = ["main.py"]
    _main(_path)
