#!/usr/bin/env python3
"""`convo serve` at scale (issue 44): start-up, the list of 10,000 conversations, and a
5,000-event conversation opened in a browser.

How to run (from the repository root)::

    cargo build --release && python3 benches/serve.py
    python3 benches/serve.py path/to/convo --rounds 7 --keep

It reuses `scale.py`'s stores (imported, stdlib only): the 10,000-conversation store (one
real conversation and 9,999 in one fast-import commit) and a store with one conversation of
about 5,000 events (gen-conversation.py turns appended in one bulk `convo append`). Needs
`chromium` for the browser figure (as the tests do).

Figures (median of --rounds after a warm-up, the two sides alternated round by round):

1. start: wall time from spawning `convo serve --port 0` to its first answered `GET /`
   (10k store, catalogue warm). Goal: well under a second (<= 0.5 s).
2. list: server time of `GET /` (the first page, 100 rows, of all 10,000), measured by the
   client over the loopback, against `convo list` (warm) of the same store. Goal <= 300 ms.
   search: `GET /api/search` for a word no conversation holds (every one searched), against
   `convo grep -F -i -l` of the same word; no goal, printed for information.
3. conversation: server time of `GET /c/ID` (the first page of 400 events) for the
   5,000-event conversation, and headless Chromium's wall time to load and render it
   (`--dump-dom`), against Chromium's time for the server's small 404 page (the browser's
   own start, the anchor). Goal: the difference <= 1 s.
4. filter: server time of `GET /?agent=…` over all 10,000 (the first filter by agent reads
   every conversation once; the figure is that first request, then a repeat), for
   information. memory: the server's peak resident size (`VmHWM`) after the list, a filter
   by agent and by person, a search and the usage page of the 10k store, against the
   largest peak of `convo list`, `convo usage --by agent` and `convo grep` of the same
   store. Goal: at most 2x the CLI's (one process holding what several commands read).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale  # noqa: E402


def get(port: int, path: str) -> float:
    """Seconds for one GET (the whole response read)."""
    start = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(1 << 16):
            data += chunk
    elapsed = time.perf_counter() - start
    status = data.split(b" ", 2)[1]
    if status not in (b"200", b"404"):
        sys.exit(f"GET {path}: {data[:300]!r}")
    return elapsed


class Served:
    def __init__(self, bench: scale.Bench, store: Path):
        self.start = time.perf_counter()
        self.proc = subprocess.Popen(bench.convo_cmd(store, "serve", "--port", "0"), stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=bench.env)
        url = self.proc.stdout.readline().decode().strip()
        self.port = int(url.rsplit(":", 1)[1].strip("/"))
        get(self.port, "/")
        self.ready = time.perf_counter() - self.start

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


def chromium(url: str, profile: Path) -> float:
    start = time.perf_counter()
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={profile}", "--dump-dom", url],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def timed(bench: scale.Bench, cmd: list[str], ok: tuple[int, ...]) -> float:
    """Wall seconds of `cmd`, which must exit with one of `ok` (grep's 1: no match)."""
    start = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=bench.env)
    if r.returncode not in ok:
        sys.exit(f"{' '.join(cmd)}: exit {r.returncode}\n{r.stderr.decode(errors='replace')}")
    return time.perf_counter() - start


def peak_kb(pid: int) -> int:
    """A live process's peak resident size in KiB (`VmHWM`)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def child_peak_kb(bench: scale.Bench, cmd: list[str]) -> int:
    """The peak resident size in KiB of `cmd` run to its end (any exit: grep's 1 is no match)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                            env=bench.env)
    _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_maxrss


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary", nargs="?", type=Path, default=scale.DEFAULT_BINARY)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=650, help="turns of the long conversation (~7.7 events each)")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    bench = scale.Bench.create(args.binary.resolve(), args.rounds, 14, Path(tempfile.gettempdir()))
    results = []
    info: list[str] = []
    try:
        fixtures = scale.Fixtures(bench, args.conversations, 100, 0)
        big = fixtures.scale().store
        bench.convo(big, "list")  # the catalogue, as a user's store has it

        starts = [Served(bench, big) for _ in range(args.rounds)]
        for s in starts:
            s.stop()
        start_ms = statistics.median(s.ready for s in starts) * 1000
        results.append(("start: spawn to first page (10k store)", start_ms, "ms", 500))

        served = Served(bench, big)
        lists, anchors = scale.alternate(args.rounds, [
            lambda: get(served.port, "/"),
            lambda: bench.measure(None, bench.convo_cmd(big, "list")),
        ])
        # A word in no conversation: every one is searched (the worst case of a keystroke).
        found, grep = scale.alternate(args.rounds, [
            lambda: get(served.port, "/api/search?q=zqxjv"),
            lambda: timed(bench, bench.convo_cmd(big, "grep", "-F", "-i", "-l", "zqxjv"), ok=(0, 1)),
        ])
        first_filter = get(served.port, "/?agent=codex")
        again_filter = get(served.port, "/?agent=codex")
        info.append(f"filter: GET /?agent=codex of {args.conversations:,}: first {first_filter * 1000:.0f} ms, "
                    f"then {again_filter * 1000:.0f} ms")
        get(served.port, "/?person=nobody")
        get(served.port, "/usage")
        served_kb = peak_kb(served.proc.pid)
        served.stop()
        cli_kb = max(child_peak_kb(bench, bench.convo_cmd(big, *cmd)) for cmd in [
            ["list"], ["usage", "--by", "agent"], ["grep", "-F", "-i", "-l", "zqxjv"]])
        if cli_kb:
            results.append((f"memory: server peak {served_kb / 1024:.0f} MiB against the CLI's largest "
                            f"{cli_kb / 1024:.0f} MiB, the ratio", served_kb / cli_kb, "x", 2))
        search_ms, grep_ms = median_ms(found), median_ms(grep)
        info.append(f"search: GET /api/search for a word in no conversation: {search_ms:.0f} ms "
                    f"(convo grep -F -i -l: {grep_ms:.0f} ms, ratio {search_ms / grep_ms:.2f})")
        list_ms, anchor_ms = median_ms(lists), median_ms(anchors)
        results.append((f"list: GET / of {args.conversations:,} (convo list: {anchor_ms:.0f} ms, "
                        f"ratio {list_ms / anchor_ms:.2f})", list_ms, "ms", 300))

        history = bench.root / "long.jsonl"
        scale.generate(args.turns, bench.seed, history)
        long_store, cid = fixtures._target("long", history)
        events = json.loads(bench.convo(long_store, "list", "--format", "json", capture=True))[0]["events"]
        served = Served(bench, long_store)
        server = [get(served.port, f"/c/{cid}") for _ in range(args.rounds + 1)][1:]
        results.append((f"conversation: GET /c/ID, {events:,} events (server)", median_ms(server), "ms", 1000))
        if shutil.which("chromium"):
            profile = bench.root / "chromium"
            page, blank = scale.alternate(args.rounds, [
                lambda: chromium(f"http://127.0.0.1:{served.port}/c/{cid}", profile),
                lambda: chromium(f"http://127.0.0.1:{served.port}/nothing", profile),
            ])
            page_ms, blank_ms = median_ms(page), median_ms(blank)
            results.append((f"conversation in Chromium: {page_ms:.0f} ms, a 404 page {blank_ms:.0f} ms, "
                            "the difference", page_ms - blank_ms, "ms", 1000))
        else:
            print("chromium not found: the browser figure is left out", file=sys.stderr)
        served.stop()
    finally:
        if args.keep:
            print(f"kept {bench.root}")
        else:
            shutil.rmtree(bench.root, ignore_errors=True)

    print()
    for line in info:
        print(f"INFO  {line}")
    failed = 0
    for metric, value, unit, goal in results:
        ok = value <= goal
        failed += not ok
        print(f"{'PASS' if ok else 'FAIL'}  {metric}: {value:.1f} {unit} (goal <= {goal} {unit})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
