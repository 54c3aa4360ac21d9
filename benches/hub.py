#!/usr/bin/env python3
"""The hub at team scale (issue 43): what one conversation, a pull and a push cost against a
hub of N conversations, beside git on the same hub in the same run.

How to run (from the repository root)::

    cargo build --release --bins && python3 benches/hub.py              # 1,000 and 10,000
    python3 benches/hub.py --sizes 1000                                # one size
    python3 benches/hub.py --binary path/to/convo --keep               # another binary, keep /tmp
    python3 benches/hub.py --cache /work/hubs                          # keep generated hubs, reuse them

Builds nothing but the hubs; drives `convo`, `git` and `git daemon` as processes. Python 3.11,
stdlib only. Everything happens under a fresh /tmp directory with HOME in it and
GIT_CONFIG_NOSYSTEM=1. Exit 0 always: this prints what holds today, for a successor to hold
against the issue's goals.

A hub of N conversations, as a team's is shaped: each grown by CAPTURES commits (default 20)
of one user + assistant pair (~5 KiB, prose-like text from a fixed seed), so ~100 KiB each,
in convo's layout (`conversations/<fan>/<id>/events/0000/NNNNNN.jsonl` in 16 KiB segments,
`meta.json`), captures interleaved round-robin as a team's are; written by one
`git fast-import` and repacked (`git repack -adq`), served by `git daemon` on loopback.
Then:

1. `convo clone` of the hub (anchor: `git clone --bare` of it), and the store's first `convo
   push`, which publishes every conversation's ref and the catalog (the migration of an
   existing hub: once per hub, by the first pusher running this convo).
2. One conversation fetched alone: `git fetch URL refs/convo/conversations/<id>` into an empty
   repository: bytes received (the pack git wrote) against that conversation's own packed
   size (`git pack-objects` of the ref's objects in the hub), and time against `git clone
   --bare` of the whole hub. This is the floor under `clone --lazy` + `show`.
3. The catalog fetched alone (`refs/convo/catalog`, `--depth 1`: its parents are the branch and
   the catalog before it): bytes and time (the rest of a lazy clone).
3b. `convo clone --lazy` and then `convo show ID` of that one conversation: bytes received by
   both against that conversation's own packed size plus the catalog (issue goal <= 1.2x the
   conversation + the catalog), time against `git fetch` of that one ref (goal <= 1.5x); and
   `list` in the lazy store against `list` in the full store of step 1 (goal <= 2x), each
   run twice (the first builds the full store's catalogue cache), the second compared.
4. `convo push` of one appended event (branch + that conversation's ref + catalog, one atomic
   push; receive-pack lists every ref to a push) against `git push` of one appended event's
   commit from the same store to the same hub (the branch only).
5. `convo pull` in a copy of the first store after that push: bytes received and time,
   against `git fetch` of the branch into the bare clone of step 1.

With `--cache DIR` a generated hub is kept in DIR (one folder per size, captures, seed and
GENERATOR version, written whole then renamed, so an interrupted run leaves none) and reused by
later runs: a run gets a copy whose files are hard links to the cached ones (git never writes a
pack or ref in place: it writes a new file and renames it), so what the run pushes never
reaches the cache. Bump GENERATOR whenever `generate` changes what it writes.

Bytes received are counted twice: over the wire, by a TCP relay in front of the daemon (steps
4-5: a thin pack, each changed tree a delta against the one the fetcher has), and on disk, the
files a command added under `objects/` (the same objects whole: a 1,024-entry tree is ~37 KB
however little changed in it). Times are one run each
(wall seconds) on a machine shared with other work: read the ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BINARY = REPO_ROOT / "target" / "release" / "convo"
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
SEGMENT = 16 * 1024
CAPTURE_BYTES = 5 * 1024
GENERATOR = 1  # the version of `generate`'s output: part of a cached hub's name


def ulid(ms: int, rng: random.Random) -> str:
    value = (ms << 80) | rng.getrandbits(80)
    return "".join(CROCKFORD[(value >> (5 * i)) & 31] for i in reversed(range(26)))


class Text:
    """Prose-like text cut from one pool, so generation is not the bottleneck."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        syllables = [c + v for c in "bcdfghjklmnprstvwz" for v in "aeiou"]
        words = ["".join(self.rng.choices(syllables, k=self.rng.randint(1, 4))) for _ in range(3000)]
        weights = [1 / (rank + 1) for rank in range(len(words))]
        self.pool = " ".join(self.rng.choices(words, weights, k=400_000))

    def take(self, length: int) -> str:
        start = self.rng.randrange(0, len(self.pool) - length)
        return self.pool[start:start + length]


def generate(hub: Path, n: int, captures: int, seed: int, env: dict) -> dict:
    """The hub's branch, by one fast-import; returns ids and the time it took."""
    rng = random.Random(seed)
    text = Text(seed)
    ids = []
    t0 = 1_750_000_000_000
    for i in range(n):
        ids.append(ulid(t0 + i * 1000, rng))
    segments = {cid: [b""] for cid in ids}  # each conversation's segments, the last open
    start = time.perf_counter()
    proc = subprocess.Popen(["git", "-C", str(hub), "fast-import", "--quiet", "--depth=50"],
                            stdin=subprocess.PIPE, env=env)
    out = proc.stdin
    when = t0 // 1000
    for capture in range(captures):
        for cid in ids:
            when += 1
            ms = when * 1000
            user_len = CAPTURE_BYTES // 4
            lines = b""
            for kind, length in (("user", user_len), ("assistant", CAPTURE_BYTES - user_len - 200)):
                event = {"id": ulid(ms, rng), "ts": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(when)),
                         "type": kind, "content": text.take(length)}
                lines += json.dumps(event, separators=(",", ":")).encode() + b"\n"
            segs = segments[cid]
            if len(segs[-1]) >= SEGMENT:
                segs.append(b"")
            segs[-1] += lines
            path = f"conversations/{cid[-2:]}/{cid}"
            message = f"append: conversation {cid} (+2 events)\n\nConvo-Id: {cid}\n".encode()
            out.write(b"commit refs/heads/main\ncommitter Bench <bench@example.com> %d +0000\n" % when)
            out.write(b"data %d\n%s" % (len(message), message))
            if capture == 0:
                created = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(when))
                meta = json.dumps({"title": f"conversation {cid[-6:]}", "created": created}, indent=2).encode() + b"\n"
                out.write(b"M 100644 inline %s/meta.json\ndata %d\n%s\n" % (path.encode(), len(meta), meta))
            number = len(segs) - 1
            seg_path = f"{path}/events/{number // 64:04d}/{number:06d}.jsonl".encode()
            out.write(b"M 100644 inline %s\ndata %d\n%s\n" % (seg_path, len(segs[-1]), segs[-1]))
    out.close()
    if proc.wait() != 0:
        sys.exit("git fast-import failed")
    generated = time.perf_counter() - start
    t = time.perf_counter()
    subprocess.run(["git", "-C", str(hub), "repack", "-adq"], check=True, env=env)
    return {"ids": ids, "generate_s": generated, "repack_s": time.perf_counter() - t}


def cached_hub(hub: Path, n: int, captures: int, seed: int, env: dict, cache: Path | None) -> dict:
    """Generate the hub at `hub`, or link it from the cache (filling the cache first if empty)."""
    if cache is None:
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(hub)], check=True, env=env)
        return generate(hub, n, captures, seed, env)
    entry = cache / f"hub-n{n}-c{captures}-s{seed}-g{GENERATOR}"
    if not (entry / "built.json").is_file():
        cache.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix=entry.name + ".partial-", dir=cache))
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(partial / "hub.git")], check=True, env=env)
        built = generate(partial / "hub.git", n, captures, seed, env)
        (partial / "built.json").write_text(json.dumps(built))
        partial.rename(entry)
    else:
        print(f"  reusing the hub cached in {entry}")
    subprocess.run(["cp", "-al", str(entry / "hub.git"), str(hub)], check=True)
    return json.loads((entry / "built.json").read_text())


def packs(repo: Path) -> int:
    """Bytes of pack files and loose objects under a repository's objects folder."""
    objects = repo / "objects" if (repo / "objects").is_dir() else repo / ".git" / "objects"
    return sum(p.stat().st_size for p in objects.rglob("*") if p.is_file())


class Run:
    def __init__(self, root: Path, binary: Path):
        self.root = root
        self.binary = binary
        home = root / "home"
        home.mkdir()
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
            "XDG_DATA_HOME": str(home / "data"), "XDG_CONFIG_HOME": str(home / "config"),
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
            "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.com", "LC_ALL": "C",
            "NO_COLOR": "1",
        }

    def run(self, *cmd, stdin: bytes | None = None, cwd: Path | None = None) -> tuple[float, str]:
        start = time.perf_counter()
        r = subprocess.run([str(c) for c in cmd], input=stdin, capture_output=True, env=self.env, cwd=cwd)
        elapsed = time.perf_counter() - start
        if r.returncode != 0:
            sys.exit(f"failed ({r.returncode}): {' '.join(map(str, cmd))}\n{r.stderr.decode(errors='replace')}")
        return elapsed, r.stdout.decode(errors="replace")

    def convo(self, store: Path, *args, stdin: bytes | None = None) -> tuple[float, str]:
        return self.run(self.binary, "--store", store, "--color", "never", "--no-pager", *args, stdin=stdin)


def daemon(root: Path, env: dict) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    child = subprocess.Popen(["git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
                              "--listen=127.0.0.1", f"--port={port}", f"--base-path={root}", str(root)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                             start_new_session=True)
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port)).close()
            break
        except OSError:
            time.sleep(0.05)
    return child, f"git://127.0.0.1:{port}"


class Relay:
    """A TCP relay in front of the daemon that counts the bytes each way: what a command
    received over the wire (a thin pack, deltas against what the fetcher has), beside what it
    added on disk (the same objects whole, loose or in a completed pack)."""

    def __init__(self, port: int):
        self.target = port
        self.down = 0  # daemon -> client
        self.up = 0
        self.lock = threading.Lock()
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self) -> None:
        while True:
            client, _ = self.server.accept()
            upstream = socket.create_connection(("127.0.0.1", self.target))
            threading.Thread(target=self.pipe, args=(client, upstream, "up"), daemon=True).start()
            threading.Thread(target=self.pipe, args=(upstream, client, "down"), daemon=True).start()

    def pipe(self, src: socket.socket, dst: socket.socket, way: str) -> None:
        try:
            while data := src.recv(65536):
                with self.lock:
                    setattr(self, way, getattr(self, way) + len(data))
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def take(self) -> tuple[int, int]:
        """(received, sent) since the last call."""
        with self.lock:
            down, up = self.down, self.up
            self.down = self.up = 0
        return down, up


def mib(n: float) -> str:
    return f"{n / 1048576:.2f} MiB" if n >= 1048576 else f"{n / 1024:.1f} KiB"


def bench(n: int, captures: int, binary: Path, seed: int, keep: bool, cache: Path | None) -> None:
    root = Path(tempfile.mkdtemp(prefix=f"convo-hub-{n}-"))
    r = Run(root, binary)
    print(f"\n== hub of {n:,} conversations x {captures} captures ({n * captures:,} commits) ==")
    hub = root / "hub.git"
    built = cached_hub(hub, n, captures, seed, r.env, cache)
    print(f"  generated by git fast-import in {built['generate_s']:.1f} s, repacked in {built['repack_s']:.1f} s; "
          f"packed {mib(packs(hub))}")
    child, base = daemon(root, r.env)
    url = f"{base}/hub.git"
    try:
        # 1. Full clones, and the first push (the migration).
        bare = root / "bare.git"
        git_clone, _ = r.run("git", "clone", "-q", "--bare", url, bare)
        store = root / "a"
        convo_clone, _ = r.convo(store, "clone", url, str(store))
        print(f"  full clone: convo {convo_clone:.2f} s, git clone --bare {git_clone:.2f} s "
              f"({convo_clone / git_clone:.2f}x; issue goal <= 1.5x); received {mib(packs(bare))}")
        first_push, _ = r.convo(store, "push")
        refs = int(r.run("git", "-C", hub, "for-each-ref", "--count=999999999", "--format=x",
                         "refs/convo/")[1].count("x"))
        print(f"  first convo push (publishes {refs - 1:,} conversation refs and the catalog): {first_push:.2f} s")

        # 2. One conversation alone.
        cid = built["ids"][len(built["ids"]) // 2]
        ref = f"refs/convo/conversations/{cid}"
        _, listed = r.run("git", "-C", hub, "rev-list", "--objects", ref)
        own = len(subprocess.run(["git", "-C", str(hub), "pack-objects", "--stdout", "-q"],
                                 input="\n".join(l.split()[0] for l in listed.splitlines()).encode(),
                                 capture_output=True, env=r.env, check=True).stdout)
        one = root / "one.git"
        r.run("git", "init", "-q", "--bare", one)
        fetch_one, _ = r.run("git", "-C", one, "fetch", "-q", "--no-tags", url, f"+{ref}:{ref}")
        got = packs(one)
        print(f"  one conversation's ref fetched alone: {mib(got)} received, its own objects packed "
              f"{mib(own)} ({got / own:.2f}x; goal <= 1.2x + the catalog); {fetch_one:.2f} s against "
              f"git clone --bare {git_clone:.2f} s ({git_clone / fetch_one:.0f}x faster)")

        # 3. The catalog alone.
        cat = root / "catalog.git"
        r.run("git", "init", "-q", "--bare", cat)
        fetch_cat, _ = r.run("git", "-C", cat, "fetch", "-q", "--no-tags", "--depth=1", url,
                             "+refs/convo/catalog:refs/convo/catalog")
        print(f"  the catalog fetched alone: {mib(packs(cat))} received in {fetch_cat:.2f} s")

        # 3b. A lazy clone, one conversation read, and list.
        lazy = root / "lazy"
        lazy_clone, _ = r.convo(lazy, "clone", "--lazy", url, str(lazy))
        cloned = packs(lazy)
        show, _ = r.convo(lazy, "show", cid)
        shown = packs(lazy) - cloned
        floor = own + packs(cat)
        print(f"  clone --lazy: {mib(cloned)} in {lazy_clone:.2f} s; then show ID: {mib(shown)} in {show:.2f} s; "
              f"together {mib(cloned + shown)}, {(cloned + shown) / floor:.2f}x the conversation's own objects "
              f"+ the catalog ({mib(floor)}; goal <= 1.2x)")
        print(f"  show ID (its fetch, check and commit) {show:.2f} s against git fetch of that ref {fetch_one:.2f} s "
              f"({show / fetch_one:.2f}x; goal <= 1.5x); clone --lazy + show {lazy_clone + show:.2f} s against "
              f"git fetch of the catalog + the ref {fetch_cat + fetch_one:.2f} s "
              f"({(lazy_clone + show) / (fetch_cat + fetch_one):.2f}x)")
        full_list = [r.convo(store, "list")[0] for _ in range(2)]
        lazy_list = [r.convo(lazy, "list")[0] for _ in range(2)]
        print(f"  list: lazy store {lazy_list[1]:.3f} s (first {lazy_list[0]:.3f} s), full store "
              f"{full_list[1]:.3f} s (first {full_list[0]:.3f} s): {lazy_list[1] / full_list[1]:.2f}x (goal <= 2x)")

        # 4. Push of one appended event. From here on through the counting relay.
        relay = Relay(int(base.rsplit(":", 1)[1]))
        url = f"git://127.0.0.1:{relay.port}/hub.git"
        r.run("git", "-C", store, "remote", "set-url", "origin", url)
        copy = root / "b"
        shutil.copytree(store, copy, symlinks=True)
        r.convo(store, "append", cid, "--user", "one more from a")
        relay.take()
        git_push, _ = r.run("git", "-C", store, "push", "-q", "origin", "HEAD:refs/heads/main")
        git_push_wire = relay.take()
        # The catalog no longer describes the branch: let convo publish that first push.
        r.convo(store, "push")
        r.convo(store, "append", cid, "--user", "and another from a")
        _, catalog_before = r.run("git", "-C", hub, "ls-tree", "refs/convo/catalog")
        relay.take()
        convo_push, _ = r.convo(store, "push")
        push_wire = relay.take()
        _, catalog_after = r.run("git", "-C", hub, "ls-tree", "refs/convo/catalog")
        rewritten = len(set(catalog_after.splitlines()) - set(catalog_before.splitlines()))
        print(f"  push of one appended event: convo {convo_push:.2f} s (branch, one ref, {rewritten} of the catalog's {len(catalog_after.splitlines())} files), "
              f"git push {git_push:.2f} s (the branch) ({convo_push / git_push:.2f}x; issue goal <= 1 s); over the wire "
              f"convo sent {mib(push_wire[1])} and heard {mib(push_wire[0])} (the refs advertised), "
              f"git sent {mib(git_push_wire[1])} and heard {mib(git_push_wire[0])}")

        # 5. Pull of what changed.
        before = packs(copy)
        relay.take()
        convo_pull, _ = r.convo(copy, "pull")
        pull_wire = relay.take()[0]
        pulled = packs(copy) - before
        before = packs(bare)
        git_fetch, _ = r.run("git", "-C", bare, "fetch", "-q", url, "+refs/heads/main:refs/heads/main")
        fetch_wire = relay.take()[0]
        fetched = packs(bare) - before
        print(f"  pull after two appended events: convo {mib(pull_wire)} received ({mib(pulled)} on disk) in "
              f"{convo_pull:.2f} s, git fetch {mib(fetch_wire)} ({mib(fetched)} on disk) in {git_fetch:.2f} s "
              f"({convo_pull / git_fetch:.2f}x; issue goal <= 50 KB, <= 1 s)")
    finally:
        os.killpg(child.pid, 15)
        child.wait()
        if keep:
            print(f"  kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", type=Path, default=DEFAULT_BINARY)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--captures", type=int, default=20)
    parser.add_argument("--seed", type=int, default=43)
    parser.add_argument("--only-generate", action="store_true", help="fill the cache and stop")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--cache", type=Path, help="keep generated hubs in this folder and reuse them")
    args = parser.parse_args()
    if not args.binary.exists():
        sys.exit(f"{args.binary} not found: cargo build --release --bins")
    if args.only_generate:
        if not args.cache:
            sys.exit("--only-generate needs --cache DIR")
        for n in args.sizes:
            root = Path(tempfile.mkdtemp(prefix=f"convo-hub-{n}-"))
            cached_hub(root / "hub.git", n, args.captures, args.seed, Run(root, args.binary).env, args.cache.resolve())
            shutil.rmtree(root, ignore_errors=True)
        return
    for n in args.sizes:
        bench(n, args.captures, args.binary.resolve(), args.seed, args.keep,
              args.cache.resolve() if args.cache else None)


if __name__ == "__main__":
    main()
