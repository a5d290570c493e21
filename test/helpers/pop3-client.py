"""A POP3 session with Python's poplib, driven by the tests.

Reads one JSON object from stdin: host, port, tls ("none", "stls" or "implicit"), user,
password, and steps, each a list such as ["retr", 1] or ["top", 1, 0]. Runs the steps in
order and prints one JSON object: the greeting, and for each step either its reply (and,
for a multi-line one, its lines as base64 joined with CRLF, as poplib un-stuffs them) or
the error poplib raised. A step that fails does not stop the next one; a closed
connection does.
"""

import base64
import json
import poplib
import ssl
import sys


def encode_lines(lines):
    return base64.b64encode(b"".join(line + b"\r\n" for line in lines)).decode("ascii")


def run_step(client, step):
    name, args = step[0], step[1:]
    if name == "capa":
        return {"capa": {k: v for k, v in client.capa().items()}}
    if name == "stat":
        count, size = client.stat()
        return {"count": count, "size": size}
    if name in ("list", "uidl") and not args:
        resp, lines, _ = getattr(client, name)()
        return {"resp": resp.decode("latin1"), "lines": [line.decode("latin1") for line in lines]}
    if name in ("list", "uidl"):
        return {"resp": getattr(client, name)(args[0]).decode("latin1")}
    if name in ("retr", "top"):
        resp, lines, octets = getattr(client, name)(*args)
        return {"resp": resp.decode("latin1"), "data": encode_lines(lines), "octets": octets}
    if name == "stls":
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return {"resp": client.stls(context).decode("latin1")}
    if name == "raw":
        return {"resp": client._shortcmd(args[0]).decode("latin1")}
    return {"resp": getattr(client, name)(*args).decode("latin1")}


def main():
    plan = json.load(sys.stdin)
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    if plan.get("tls") == "implicit":
        client = poplib.POP3_SSL(plan["host"], plan["port"], context=context, timeout=30)
    else:
        client = poplib.POP3(plan["host"], plan["port"], timeout=30)
    out = {"welcome": client.getwelcome().decode("latin1"), "steps": []}
    if plan.get("tls") == "stls":
        out["stls"] = client.stls(context).decode("latin1")
    for step in plan["steps"]:
        try:
            out["steps"].append(run_step(client, step))
        except poplib.error_proto as error:
            if error.args and error.args[0] in (b"-ERR EOF", "-ERR EOF"):
                out["steps"].append({"closed": "EOF"})
                break
            out["steps"].append({"error": str(error.args[0].decode("latin1") if isinstance(error.args[0], bytes) else error.args[0])})
        except (OSError, EOFError) as error:
            out["steps"].append({"closed": str(error)})
            break
    print(json.dumps(out))


main()
