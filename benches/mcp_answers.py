#!/usr/bin/env python3
"""`fluxfleet mcp` as an assistant's client drives it, over raw JSON-RPC on stdio: the time to
each answer, its size on the wire, its page, and the server's peak memory (docs/commands.md,
"fluxfleet mcp", Measured).

    cargo build --release
    target/release/fluxfleet sim --scenario uniform --clusters 10000 --workspaces 24 \
        --objects 20 --operator 1 --out /tmp/mcp10k &
    benches/mcp_answers.py /tmp/mcp10k/kubeconfigs summary      # --watch-mode
"""
import json, os, subprocess, sys, time

kc, mode = sys.argv[1], sys.argv[2]
binary = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target", "release", "fluxfleet")
t0 = time.time()
p = subprocess.Popen(["/usr/bin/time", "-f", "%M", binary, "mcp",
                      "--kubeconfig-dir", kc, "--watch-mode", mode, "--timeout", "300s"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                     env=dict(os.environ, FLUXFLEET_CONFIG="/nonexistent"))
def send(m):
    p.stdin.write((json.dumps(m) + "\n").encode()); p.stdin.flush()
def recv():
    return json.loads(p.stdout.readline())
send({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})
recv(); print(f"initialized after {time.time()-t0:.2f} s")
send({"jsonrpc":"2.0","method":"notifications/initialized"})
calls = [("fleet_summary", {}), ("list_clusters", {"limit": 1000}), ("get_objects", {"status": "failing", "limit": 1000}),
         ("root_causes", {}), ("rollouts", {}), ("get_objects", {"status": "failing", "limit": 1000, "cursor": "5000"})]
for i, (name, args) in enumerate(calls):
    t = time.time()
    send({"jsonrpc":"2.0","id":10+i,"method":"tools/call","params":{"name":name,"arguments":args}})
    r = recv()
    sc = r["result"].get("structuredContent", {})
    size = len(json.dumps(r))
    print(f"{name} {args}: {time.time()-t:.2f} s (at {time.time()-t0:.1f} s), {size/1024:.0f} KiB, page {sc.get('page')}")
p.stdin.close(); p.wait()
print("peak", int(p.stderr.read().decode().strip().splitlines()[-1]) // 1024, "MiB")
