"""Issue 49: the compat and REST paths, called by an httpx client configured exactly as the Python
`mem0ai` package's MemoryClient configures its own (mem0/client/main.py: base_url=host, the
`Authorization: Token <key>` and `Mem0-User-ID` headers, timeout=300, httpx's default
follow_redirects=False), each path with and without its trailing slash. Prints one JSON object:
{"<METHOD> <path>": status, ...}. A 308 stays a 308 here: httpx does not follow it.

argv: <server url> <api key> <pipeline id>
"""
import hashlib
import json
import sys

import httpx

server, key, pipeline = sys.argv[1], sys.argv[2], sys.argv[3]
statuses = {}


def record(client, label, method, path, **kw):
    response = client.request(method, path, **kw)
    statuses[f"{label} {method} {path}"] = response.status_code


# As mem0ai's MemoryClient.__init__ builds it (follow_redirects is left at httpx's default, False).
mem0 = httpx.Client(
    base_url=f"{server}/compat/mem0",
    headers={"Authorization": f"Token {key}", "Mem0-User-ID": hashlib.md5(key.encode()).hexdigest()},
    timeout=300,
)
for path in ["/v1/ping/", "/v1/ping"]:
    record(mem0, "mem0", "GET", path)
for path in ["/v3/memories/", "/v3/memories"]:
    record(mem0, "mem0", "POST", path, json={"filters": {"user_id": "py-user"}})
for path in ["/v1/entities/", "/v1/entities"]:
    record(mem0, "mem0", "GET", path)
for path in ["/v1/memories/", "/v1/memories"]:
    record(mem0, "mem0", "DELETE", path, params={"user_id": "py-user"})

zep = httpx.Client(base_url=f"{server}/compat/zep", headers={"Authorization": f"Api-Key {key}"}, timeout=300)
for path in ["/users-ordered/", "/users-ordered"]:
    record(zep, "zep", "GET", path)

rest = httpx.Client(base_url=f"{server}/api/v1", headers={"Authorization": f"Bearer {key}"}, timeout=300)
for path in [f"/pipelines/{pipeline}/runs/", f"/pipelines/{pipeline}/runs"]:
    record(rest, "rest", "GET", path)

print(json.dumps(statuses))
