#!/usr/bin/env python3
"""`fluxfleet mcp --listen` under a team's load: CLIENTS concurrent HTTP clients (keep-alive, each
its own connection), each calling `root_causes` and `get_objects` (failing objects, a page of
100) ROUNDS times on one server; the latency of every call per tool (p50, p90, p99, max), errors,
and the server's peak memory (docs/commands.md, "fluxfleet mcp", Measured).

    cargo build --release
    target/release/fluxfleet sim --scenario uniform --clusters 10000 --workspaces 24 \
        --objects 20 --operator 1 --out /tmp/mcp10k &
    CLIENTS=20 ROUNDS=10 benches/mcp_http.py /tmp/mcp10k/kubeconfigs summary

Plain HTTP on loopback (TLS adds a handshake per connection, not per call); every client comes
from 127.0.0.1, so with one shared token --max-calls-per-client is raised to the number of clients.

AUTH=oauth runs the team's server as config/deploy/mcp.yaml does (--oauth-issuer, --impersonate,
--write) with the limits at their defaults: each client is an assistant with a token of its own
from the tests' OpenID provider (tests/oidc, installed by .ci/test; at most 20 clients), and its
limits are its own.

    AUTH=oauth CLIENTS=20 ROUNDS=10 benches/mcp_http.py /tmp/mcp10k/kubeconfigs summary
"""
import base64, http.client, json, os, secrets, subprocess, sys, tempfile, threading, time, urllib.request

kc, mode = sys.argv[1], sys.argv[2]
clients, rounds = int(os.environ.get("CLIENTS", "20")), int(os.environ.get("ROUNDS", "10"))
port, health = int(os.environ.get("PORT", "18443")), int(os.environ.get("HEALTH", "19440"))
binary = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target", "release", "fluxfleet")
oauth = os.environ.get("AUTH", "token") == "oauth"
tokdir = tempfile.mkdtemp()
if oauth:
    # The tests' OpenID provider; each client an assistant with a token of its own.
    assert clients <= 20, "the tests' provider has 20 assistants"
    audience = f"http://127.0.0.1:{port}/mcp"
    here = os.path.dirname(os.path.abspath(__file__))
    provider = subprocess.Popen(["node", os.path.join(here, "..", "tests", "oidc", "provider.mjs")],
                                stdout=subprocess.PIPE, text=True,
                                env=dict(os.environ, PORT="0", KEYS=os.path.join(tokdir, "keys.json"),
                                         RESOURCE=audience))
    issuer = provider.stdout.readline().split()[1]
    endpoint = json.load(urllib.request.urlopen(f"{issuer}/.well-known/openid-configuration"))["token_endpoint"]
    def token_of(client):
        basic = base64.b64encode(f"{client}:{client}-secret".encode()).decode()
        req = urllib.request.Request(endpoint, data=b"grant_type=client_credentials&scope=fluxfleet%3Aread",
                                     headers={"Authorization": f"Basic {basic}",
                                              "Content-Type": "application/x-www-form-urlencoded"})
        return json.load(urllib.request.urlopen(req))["access_token"]
    tokens = [token_of(f"assistant-{n + 1}") for n in range(clients)]
    auth = ["--oauth-issuer", issuer, "--oauth-audience", audience, "--impersonate", "--write"]
else:
    token = secrets.token_hex(24)
    with open(os.path.join(tokdir, "token"), "w") as f:
        f.write(token + "\n")
    tokens = [token] * clients
    auth = ["--token-file", os.path.join(tokdir, "token"), "--max-calls-per-client", str(clients)]
t0 = time.time()
server = subprocess.Popen([binary, "mcp", "--listen", f"127.0.0.1:{port}", *auth,
                           "--health-addr", f"127.0.0.1:{health}",
                           "--kubeconfig-dir", kc, "--watch-mode", mode, "--timeout", "300s"],
                          stderr=subprocess.DEVNULL,
                          env=dict(os.environ, FLUXFLEET_CONFIG="/nonexistent", FLUXFLEET_DATA_DIR=tokdir))

def ready():
    try:
        c = http.client.HTTPConnection("127.0.0.1", health, timeout=2)
        c.request("GET", "/readyz")
        return c.getresponse().status == 200
    except OSError:
        return False

while not ready():
    if server.poll() is not None:
        sys.exit("the server ended")
    time.sleep(0.5)
print(f"ready (every cluster answered once) after {time.time()-t0:.1f} s")

headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
           "MCP-Protocol-Version": "2025-06-18"}
calls = [("root_causes", {}), ("get_objects", {"status": "failing", "limit": 100})]
times = {name: [] for name, _ in calls}
errors = []
lock = threading.Lock()

def client(n):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    mine = dict(headers, Authorization=f"Bearer {tokens[n]}")
    def post(msg):
        c.request("POST", "/mcp", body=json.dumps(msg), headers=mine)
        r = c.getresponse()
        return r.status, r.read()
    post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
          "capabilities": {}, "clientInfo": {"name": f"bench-{n}", "version": "1"}}})
    post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for r in range(rounds):
        for name, args in calls:
            t = time.time()
            status, body = post({"jsonrpc": "2.0", "id": 10 + r, "method": "tools/call",
                                 "params": {"name": name, "arguments": args}})
            took = time.time() - t
            with lock:
                if status != 200 or b'"isError":true' in body:
                    errors.append((name, status, body[:200]))
                else:
                    times[name].append(took)

start = time.time()
threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
for t in threads: t.start()
for t in threads: t.join()
wall = time.time() - start
with open(f"/proc/{server.pid}/status") as f:
    hwm = next(int(l.split()[1]) for l in f if l.startswith("VmHWM"))
server.terminate(); server.wait()
if oauth:
    provider.terminate(); provider.wait()

def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]
print(f"{clients} clients × {rounds} rounds in {wall:.1f} s; errors: {len(errors)} {errors[:3]}")
for name, xs in times.items():
    print(f"{name}: {len(xs)} calls, p50 {pct(xs,.5)*1000:.0f} ms, p90 {pct(xs,.9)*1000:.0f} ms, "
          f"p99 {pct(xs,.99)*1000:.0f} ms, max {max(xs)*1000:.0f} ms")
print(f"server peak {hwm // 1024} MiB")
