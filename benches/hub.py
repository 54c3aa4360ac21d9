#!/usr/bin/env python3
"""The hub at team scale (issue 43): what one conversation, a pull and a push cost against a
hub of N conversations, beside git on the same hub in the same run.

How to run (from the repository root)::

    cargo build --release --bins && python3 benches/hub.py              # 1,000 and 10,000
    python3 benches/hub.py --sizes 1000                                # one size
    python3 benches/hub.py --binary path/to/convo --keep               # another binary, keep /tmp
    python3 benches/hub.py --cache /work/hubs                          # keep generated hubs, reuse them
    python3 benches/hub.py --sizes 1000 --check-publish --cache /work/hubs  # publish against convo's push
    python3 benches/hub.py --sizes 100000 --cache /work/hubs           # lazy stores only (the default here)

Builds nothing but the hubs; drives `convo`, `git` and `git daemon` as processes. Python 3.11,
stdlib only. Everything happens under a fresh /tmp directory with HOME in it and
GIT_CONFIG_NOSYSTEM=1. Exit 0 always: this prints what holds today, for a successor to hold
against the issue's goals.

A hub of N conversations, as a team's is shaped: each grown by CAPTURES commits (default 20)
of one user + assistant pair (~5 KiB, prose-like text from a fixed seed), so ~100 KiB each,
in convo's layout (`conversations/<fan>/<id>/events/0000/NNNNNN.jsonl` in 16 KiB segments,
`meta.json`), captures interleaved round-robin as a team's are; written by one
`git fast-import` and repacked (`git repack -adq`), served by `git daemon` on loopback.
Then each conversation's ref `refs/convo/conversations/<id>` and the catalog
`refs/convo/catalog` are published into it without convo, as convo's first push would
(`publish`: one `git ls-tree`, one `git cat-file --batch` per core, one `git fast-import`;
`--check-publish` proves it the same objects as convo's own migration push, and a full
clone's first push then publishes nothing), so no size needs a full store to get them. Then:

1. `convo clone` of the hub (anchor: `git clone --bare` of it), the disk both take, and the
   store's first `convo push` (the refs and catalog published: it publishes nothing).
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

From 100,000 conversations (or with `--lazy-only`) there is no full store: its working tree
and `.git` would take some 25 GB at 100,000 (`why_lazy_only` scales the sizes step 1 measured
at a smaller size), and a full clone tens of minutes. Steps 2-3b run as above (but `list`
has no full store to compare with), then, from lazy stores (`lazy_push_pull`): a teammate's
lazy store that fetched the same conversation appends one event and pushes it (anchor: `git
push` of a one-commit change from a scratch repository to a scratch ref of the same hub),
and the first lazy store pulls it (anchor: `git fetch` of the new catalog, `--depth 1`, and
of the conversation's new ref, into the repositories of steps 2 and 3, which hold the
previous ones: what a lazy store needs, fetched by git). `--push-binary` names the convo
for those two steps; `--branch-files` publishes the catalog with `branch.commit` and
`branch.tree` for a convo that reads them (one that does not refuses such a catalog).

With `--cache DIR` a generated hub is kept in DIR (one folder per size, captures, seed and
GENERATOR version, written whole then renamed, so an interrupted run leaves none) and reused by
later runs: a run gets a copy whose files are hard links to the cached ones (git never writes a
pack or ref in place: it writes a new file and renames it), so what the run pushes never
reaches the cache. Bump GENERATOR whenever `generate` changes what it writes. A published hub
is an entry of its own (`-p<PUBLISHER>`, `b` with the branch files), made from a hard-linked
copy of the generated one: bump PUBLISHER whenever `publish` changes what it writes.

Bytes received are counted twice: over the wire, by a TCP relay in front of the daemon (steps
4-5: a thin pack, each changed tree a delta against the one the fetcher has), and on disk, the
files a command added under `objects/` (the same objects whole: a 1,024-entry tree is ~37 KB
however little changed in it). Times are one run each
(wall seconds) on a machine shared with other work: read the ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import hashlib
import json
import math
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
LAZY_ONLY_FROM = 100_000  # from this size the bench makes lazy stores only (see `why_lazy_only`)
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


def cached_hub(hub: Path | None, n: int, captures: int, seed: int, env: dict, cache: Path | None) -> dict:
    """Generate the hub at `hub`, or link it from the cache (filling the cache first if empty)."""
    if cache is None:
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(hub)], check=True, env=env)
        return generate(hub, n, captures, seed, env)
    entry = cache / f"hub-n{n}-c{captures}-s{seed}-g{GENERATOR}"
    if not (entry / "built.json").is_file():
        under_way = sorted(cache.glob(entry.name + ".partial-*"))
        if under_way and n >= LAZY_ONLY_FROM:
            # Hours of generation: never a second one beside a run in progress (or one cut
            # short, which its owner removes).
            sys.exit(f"{under_way[0]} is being generated (or was cut short): wait for it, or remove it")
        cache.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix=entry.name + ".partial-", dir=cache))
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(partial / "hub.git")], check=True, env=env)
        built = generate(partial / "hub.git", n, captures, seed, env)
        (partial / "built.json").write_text(json.dumps(built))
        partial.rename(entry)
    elif hub is not None:
        print(f"  reusing the hub cached in {entry}")
    if hub is not None:
        subprocess.run(["cp", "-al", str(entry / "hub.git"), str(hub)], check=True)
    return json.loads((entry / "built.json").read_text()) | {"entry": entry}


PUBLISHER = 1  # the version of `publish`'s output: part of a published hub's name
SIGNATURE = b"convo <convo@localhost>"


def sha1_object(kind: bytes, data: bytes) -> bytes:
    return hashlib.sha1(b"%s %d\0%s" % (kind, len(data), data)).digest()


def snapshot_commit(cid: str, folder: bytes, when: int) -> bytes:
    """The object id (raw) of conversation `cid`'s ref as `hub::snapshot_commit` writes it:
    its folder tree wrapped in `<id>`, `<fan>` and `conversations` single-entry trees, no
    parent, `convo <convo@localhost>` dated by its last event, `convo: conversation <id>`."""
    tree = folder
    for name in (cid, cid[-2:], "conversations"):
        tree = sha1_object(b"tree", b"40000 %s\0%s" % (name.encode(), tree))
    return sha1_object(b"commit", b"tree %s\nauthor %s %d +0000\ncommitter %s %d +0000\n\nconvo: conversation %s\n"
                       % (tree.hex().encode(), SIGNATURE, when, SIGNATURE, when, cid.encode()))


def rfc3339_seconds(text: str) -> int:
    """`hub::seconds`: seconds since the epoch of an RFC 3339 time, 0 for anything else."""
    try:
        return math.floor(datetime.datetime.fromisoformat(text).timestamp()) if "T" in text else 0
    except ValueError:
        return 0


def serde_line(value: dict) -> bytes:
    """A line as serde_json writes a struct: fields in declaration order (the dict's), no
    spaces, only `"`, `\\` and control characters escaped (lower-case hex), UTF-8 raw."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def cat_blobs(repo: Path, oids: list[str], env: dict):
    """Yield the content of each blob in `oids`, in order, from one `git cat-file --batch`."""
    proc = subprocess.Popen(["git", "-C", str(repo), "cat-file", "--batch"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, env=env)

    def feed() -> None:
        for oid in oids:
            proc.stdin.write(oid.encode() + b"\n")
        proc.stdin.close()
    threading.Thread(target=feed, daemon=True).start()
    read = proc.stdout
    for _ in oids:
        header = read.readline().split()
        if len(header) != 3:
            sys.exit(f"git cat-file: {header!r}")
        data = read.read(int(header[2]))
        read.read(1)
        yield data
    proc.wait()


def conversation_numbers(segments: list[bytes]) -> tuple[int, int, str | None, str | None, str | None]:
    """(events, turns, ts of the last event, agent, person) of one conversation's segments, in
    order, as convo's `cached_stats_in` and `who_and_size` count them: every line one event,
    a user event one turn (scaffolding starts none: the shapes `event::scaffolding` knows
    are parsed line by line), agent and person from the first segment's events."""
    events = turns = 0
    last = None
    for data in segments:
        lines = data.count(b"\n")
        if not lines:
            continue
        events += lines
        users = data.count(b'"type":"user"')
        if users and (b'"meta"' in data or b'"claude_meta"' in data or b"<" in data or b"Caveat" in data
                      or b"# AGENTS.md" in data):
            # Text that could be scaffolding: parse, and count as `starts_turn` does for
            # the plain shapes (a `meta` mark); anything subtler is not this generator's.
            users = 0
            for line in data.splitlines():
                event = json.loads(line)
                if event.get("type") == "user" and event.get("meta", event.get("claude_meta")) is not True:
                    users += 1
        turns += users
        last = json.loads(data[data.rstrip(b"\n").rfind(b"\n") + 1:])["ts"]
    agent = person = None
    first = segments[0] if segments else b""
    if b'"agent"' in first or b'"person"' in first:
        for line in first.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            field = lambda key: event.get(key) if isinstance(event.get(key), str) and event.get(key) else None
            person = person or field("person")
            if agent is None and field("agent"):
                agent = field("agent") + (f" {field('agent_version')}" if field("agent_version") else "")
            if agent and person:
                break
    return events, turns, last, agent, person


def publish(repo: Path, env: dict, branch_files: bool) -> dict:
    """Publish, into the generated hub `repo` and without convo, what convo's first push to
    it would: each conversation's ref `refs/convo/conversations/<id>` and the catalog
    `refs/convo/catalog` (`src/store/hub.rs`: `publication`, `snapshot_commit`,
    `catalog_commit`, `CatalogLine`, `who_and_size`). One `git ls-tree` of the branch lists
    every conversation's folder, one `git cat-file --batch` reads their `meta.json` and
    segments, one `git fast-import` writes the snapshot commits and the catalog commit.
    With `branch_files` the catalog's tree also holds `branch.commit` and `branch.tree`,
    the raw branch tip commit and its root tree (the lead's lazy push reads them; a convo
    without that change refuses such a catalog)."""
    start = time.perf_counter()
    git = lambda *args: subprocess.run(["git", "-C", str(repo), *args], capture_output=True, env=env,
                                       check=True).stdout
    tip = git("rev-parse", "refs/heads/main").decode().strip()
    folders: dict[str, str] = {}
    metas: dict[str, str] = {}
    segments: dict[str, list[tuple[str, str, int]]] = {}
    listing = git("ls-tree", "-r", "-t", "-l", "-z", tip, "conversations")
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        info, path = entry.decode().split("\t", 1)
        mode, kind, oid, size = info.split()
        parts = path.split("/")
        if len(parts) < 3 or len(parts[1]) != 2 or parts[2][-2:] != parts[1]:
            continue
        cid = parts[2]
        if len(parts) == 3 and kind == "tree":
            folders[cid] = oid
        elif parts[3:] == ["meta.json"] and kind == "blob":
            metas[cid] = oid
        elif len(parts) == 6 and parts[3] == "events" and kind == "blob" and parts[5].endswith(".jsonl"):
            segments.setdefault(cid, []).append((path, oid, int(size)))
    listed = time.perf_counter()
    ids = sorted(folders)

    def read_chunk(chunk: list[str]) -> list[tuple[dict | None, tuple]]:
        """`meta.json` and the numbers of each conversation in `chunk`, by one cat-file."""
        order = [oid for cid in chunk for oid in ([metas[cid]] if cid in metas else [])
                 + [oid for _, oid, _ in sorted(segments.get(cid, []))]]
        blobs = cat_blobs(repo, order, env)
        out = []
        for cid in chunk:
            meta = None
            if cid in metas:
                try:
                    meta = json.loads(next(blobs))
                except ValueError:
                    pass
                if not isinstance(meta, dict) or not isinstance(meta.get("created"), str):
                    meta = None
            out.append((meta, conversation_numbers([next(blobs) for _ in segments.get(cid, [])])))
        return out

    # Two cat-file processes, one per core: inflating the segments is most of the time.
    half = len(ids) // 2
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        read_all = [x for part in pool.map(read_chunk, [ids[:half], ids[half:]]) for x in part]
    lines: dict[str, dict] = {}
    for cid, (meta, (events, turns, last, agent, person)) in zip(ids, read_all):
        if meta is not None:
            project = meta.get("project") if isinstance(meta.get("project"), dict) else {}
            title = meta.get("title") if isinstance(meta.get("title"), str) else None
            created = meta["created"]
            updated = last if last is not None else created
            field = lambda key: project.get(key) if isinstance(project.get(key), str) else None
            project = {"cwd": field("cwd"), "branch": field("branch"), "remote": field("remote")}
        else:  # convo's `summary` failed: published all the same, without what it could not read
            title, created, updated, events, turns = None, "", "", 0, 0
            project = {"cwd": None, "branch": None, "remote": None}
        when = rfc3339_seconds(updated)
        lines[cid] = {
            "id": cid, "title": title, "project": project, "agent": agent, "person": person,
            "created": created, "updated": updated, "events": events, "turns": turns,
            "bytes": sum(size for _, _, size in segments.get(cid, [])), "tree": folders[cid],
            "tip": snapshot_commit(cid, bytes.fromhex(folders[cid]), when).hex(), "when": when,
        }
    read = time.perf_counter()
    proc = subprocess.Popen(["git", "-C", str(repo), "fast-import", "--quiet"], stdin=subprocess.PIPE, env=env)
    out = proc.stdin
    for cid, line in lines.items():
        message = b"convo: conversation %s\n" % cid.encode()
        out.write(b"commit refs/convo/conversations/%s\nauthor %s %d +0000\ncommitter %s %d +0000\n"
                  b"data %d\n%s\nM 040000 %s conversations/%s/%s\n\n"
                  % (cid.encode(), SIGNATURE, line["when"], SIGNATURE, line["when"], len(message), message,
                     line["tree"].encode(), cid[-2:].encode(), cid.encode()))
    fans: dict[str, bytes] = {}
    for cid, line in lines.items():
        del line["when"]
        fans[cid[-2:]] = fans.get(cid[-2:], b"") + serde_line(line)
    when = int(git("log", "-1", "--format=%ct", tip).decode())
    message = f"convo: catalog of {len(lines)} conversations\n\nConvo-Branch: {tip}\n".encode()
    out.write(b"commit refs/convo/catalog\nauthor %s %d +0000\ncommitter %s %d +0000\ndata %d\n%s\nfrom %s\ndeleteall\n"
              % (SIGNATURE, when, SIGNATURE, when, len(message), message, tip.encode()))
    files = {f"{fan}.jsonl": data for fan, data in sorted(fans.items())}
    if branch_files:
        files["branch.commit"] = git("cat-file", "commit", tip)
        files["branch.tree"] = git("cat-file", "tree", f"{tip}^{{tree}}")
    for name, data in files.items():
        out.write(b"M 100644 inline %s\ndata %d\n%s\n" % (name.encode(), len(data), data))
    out.write(b"\n")
    out.close()
    if proc.wait() != 0:
        sys.exit("git fast-import (publish) failed")
    git("pack-refs", "--all")
    # The commits fast-import wrote are the ones computed for the catalog's `tip`s.
    refs = dict(l.split() for l in git("for-each-ref", "--format=%(refname:lstrip=3) %(objectname)",
                                       "refs/convo/conversations/").decode().splitlines())
    wrong = [cid for cid, line in lines.items() if refs.get(cid) != line["tip"]]
    if wrong:
        sys.exit(f"publish: {len(wrong)} snapshot commits differ from the computed ones, e.g. {wrong[0]}")
    return {"publish_s": time.perf_counter() - start, "publish_list_s": listed - start,
            "publish_read_s": read - listed, "publish_import_s": time.perf_counter() - read,
            "published": len(lines), "branch_files": branch_files}


def add_branch_files(repo: Path, env: dict) -> dict:
    """Rewrite the catalog `publish` wrote into `repo` with `branch.commit` and `branch.tree`
    beside its fan files (the same blobs): a published hub's `b` entry without reading every
    conversation again."""
    start = time.perf_counter()
    git = lambda *args: subprocess.run(["git", "-C", str(repo), *args], capture_output=True, env=env,
                                       check=True).stdout
    commit = git("cat-file", "commit", "refs/convo/catalog")
    head, message = commit.split(b"\n\n", 1)
    tip = git("rev-parse", "refs/heads/main").decode().strip()
    when = int(git("log", "-1", "--format=%ct", tip).decode())
    if b"Convo-Branch: " + tip.encode() not in message:
        sys.exit("add_branch_files: the catalog does not describe the branch")
    proc = subprocess.Popen(["git", "-C", str(repo), "fast-import", "--quiet", "--force"], stdin=subprocess.PIPE,
                            env=env)
    out = proc.stdin
    out.write(b"commit refs/convo/catalog\nauthor %s %d +0000\ncommitter %s %d +0000\ndata %d\n%s\nfrom %s\ndeleteall\n"
              % (SIGNATURE, when, SIGNATURE, when, len(message), message, tip.encode()))
    for entry in git("ls-tree", "-z", "refs/convo/catalog").split(b"\0"):
        if entry:
            info, name = entry.split(b"\t", 1)
            out.write(b"M 100644 %s %s\n" % (info.split()[2], name))
    for name, data in (("branch.commit", git("cat-file", "commit", tip)),
                       ("branch.tree", git("cat-file", "tree", f"{tip}^{{tree}}"))):
        out.write(b"M 100644 inline %s\ndata %d\n%s\n" % (name.encode(), len(data), data))
    out.write(b"\n")
    out.close()
    if proc.wait() != 0:
        sys.exit("git fast-import (branch files) failed")
    return {"branch_files": True, "branch_files_s": time.perf_counter() - start}


def published_hub(hub: Path, n: int, captures: int, seed: int, env: dict, cache: Path | None,
                  branch_files: bool) -> dict:
    """The generated hub at `hub` with its conversations' refs and catalog published
    ([`publish`]), or linked from the cache: its own entry (the generated one's name and
    `-p<PUBLISHER>`, `b` for the branch files), made from a hard-linked copy of the
    generated entry (fast-import and pack-refs write new files and rename, never into a
    linked one), written whole then renamed, so an unpublished hub is never taken for one."""
    if cache is None:
        built = cached_hub(hub, n, captures, seed, env, None)
        return built | publish(hub, env, branch_files)
    built = cached_hub(None, n, captures, seed, env, cache)
    entry = cache / f"hub-n{n}-c{captures}-s{seed}-g{GENERATOR}-p{PUBLISHER}{'b' if branch_files else ''}"
    if not (entry / "built.json").is_file():
        partial = Path(tempfile.mkdtemp(prefix=entry.name + ".partial-", dir=cache))
        plain = entry.with_name(entry.name.removesuffix("b"))
        if branch_files and (plain / "built.json").is_file():
            # The same refs and fan files: only the catalog's commit and tree change.
            subprocess.run(["cp", "-al", str(plain / "hub.git"), str(partial / "hub.git")], check=True)
            built = json.loads((plain / "built.json").read_text()) | add_branch_files(partial / "hub.git", env)
        else:
            subprocess.run(["cp", "-al", str(built["entry"] / "hub.git"), str(partial / "hub.git")], check=True)
            built = built | publish(partial / "hub.git", env, branch_files)
            del built["entry"]
        (partial / "built.json").write_text(json.dumps(built))
        partial.rename(entry)
    elif hub is not None:
        print(f"  reusing the published hub cached in {entry}")
    if hub is not None:
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

    def run(self, *cmd, stdin: bytes | None = None, cwd: Path | None = None, check: bool = True) -> tuple[float, str]:
        """(wall seconds, stdout); without `check`, a failure gives (None, its stderr)."""
        start = time.perf_counter()
        r = subprocess.run([str(c) for c in cmd], input=stdin, capture_output=True, env=self.env, cwd=cwd)
        elapsed = time.perf_counter() - start
        if r.returncode != 0:
            if not check:
                return None, r.stderr.decode(errors="replace")
            sys.exit(f"failed ({r.returncode}): {' '.join(map(str, cmd))}\n{r.stderr.decode(errors='replace')}")
        return elapsed, r.stdout.decode(errors="replace")

    def convo(self, store: Path, *args, stdin: bytes | None = None, binary: Path | None = None,
              check: bool = True) -> tuple[float, str]:
        return self.run(binary or self.binary, "--store", store, "--color", "never", "--no-pager", *args,
                        stdin=stdin, check=check)


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


def stop(child: subprocess.Popen, root: Path, keep: bool) -> None:
    """End a run: the daemon stopped, its folder kept (and said) or removed."""
    os.killpg(child.pid, 15)
    child.wait()
    if keep:
        print(f"  kept {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)


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
    if n >= 1 << 30:
        return f"{n / (1 << 30):.2f} GiB"
    return f"{n / 1048576:.2f} MiB" if n >= 1048576 else f"{n / 1024:.1f} KiB"


def du(path: Path) -> int:
    """Bytes a folder takes on disk."""
    return int(subprocess.run(["du", "-s", "--block-size=1", str(path)], capture_output=True, text=True,
                              check=True).stdout.split()[0])


def refs_of(r: Run, repo: Path) -> dict[str, str]:
    return dict(l.split()[::-1] for l in r.run("git", "-C", repo, "for-each-ref", "--format=%(objectname) %(refname)",
                                                "refs/convo/")[1].splitlines())


def moved(before: dict[str, str], after: dict[str, str]) -> tuple[int, bool]:
    """(conversation refs created, moved or deleted; whether the catalog moved)."""
    changed = {ref for ref in before.keys() | after.keys() if before.get(ref) != after.get(ref)}
    return len(changed - {"refs/convo/catalog"}), "refs/convo/catalog" in changed


def why_lazy_only(n: int, cache: Path | None, hub: Path) -> str:
    """Why the full clone and `git clone --bare` are not run at this size: the disk they
    would take, scaled from the largest smaller run that measured it."""
    measured = sorted((json.loads(p.read_text()) for p in cache.glob("disk-n*.json")), key=lambda d: d["n"]) if cache else []
    measured = [d for d in measured if d["n"] < n]
    free = shutil.disk_usage(hub).free
    if not measured:
        return f"no smaller run measured the disk a full store takes ({mib(free)} free here)"
    d = measured[-1]
    k = n / d["n"]
    need = k * (2 * d["store"] + d["bare"])
    return (f"at {d['n']:,} the store took {mib(d['store'])} (working tree {mib(d['worktree'])}, .git "
            f"{mib(d['store'] - d['worktree'])}) and git clone --bare {mib(d['bare'])}; linear in the hub, "
            f"{n:,} needs ~{mib(k * d['store'])} for the store, as much again for the bench's copy of it (the "
            f"pull), and ~{mib(k * d['bare'])} for the bare clone: ~{mib(need)} beside the hub, with "
            f"{mib(free)} free on this disk")


def bench(n: int, captures: int, binary: Path, seed: int, keep: bool, cache: Path | None, lazy_only: bool,
          branch_files: bool, push_binary: Path | None) -> None:
    root = Path(tempfile.mkdtemp(prefix=f"convo-hub-{n}-"))
    r = Run(root, binary)
    print(f"\n== hub of {n:,} conversations x {captures} captures ({n * captures:,} commits) ==")
    hub = root / "hub.git"
    built = published_hub(hub, n, captures, seed, r.env, cache, branch_files)
    made = (f"generated by git fast-import in {built['generate_s']:.1f} s, repacked in {built['repack_s']:.1f} s"
            if not built.get("early") else "generated by git fast-import, not repacked (a linked copy of its pack)")
    print(f"  {made}; packed {mib(packs(hub))}; its refs and catalog published without convo in {built['publish_s']:.1f} s "
          f"(ls-tree {built['publish_list_s']:.1f} s, reading meta.json and segments {built['publish_read_s']:.1f} s, "
          f"fast-import {built['publish_import_s']:.1f} s){'; the catalog with branch.commit and branch.tree' if branch_files else ''}")
    child, base = daemon(root, r.env)
    url = f"{base}/hub.git"
    try:
        if not lazy_only:
            # 1. Full clones, and the first push (the refs and catalog published already).
            bare = root / "bare.git"
            git_clone, _ = r.run("git", "clone", "-q", "--bare", url, bare)
            store = root / "a"
            convo_clone, _ = r.convo(store, "clone", url, str(store))
            print(f"  full clone: convo {convo_clone:.2f} s, git clone --bare {git_clone:.2f} s "
                  f"({convo_clone / git_clone:.2f}x; issue goal <= 1.5x); received {mib(packs(bare))}")
            disk = {"n": n, "store": du(store), "worktree": du(store) - du(store / ".git"), "bare": du(bare)}
            print(f"  on disk: the store {mib(disk['store'])} (working tree {mib(disk['worktree'])}), "
                  f"git clone --bare {mib(disk['bare'])}")
            if cache:
                partial = cache / f".disk-n{n}.json.partial"
                partial.write_text(json.dumps(disk))
                partial.rename(cache / f"disk-n{n}.json")
            before = refs_of(r, hub)
            first_push, _ = r.convo(store, "push")
            refs, catalog = moved(before, refs_of(r, hub))
            print(f"  first convo push (the hub published by this bench): {first_push:.2f} s; it published "
                  f"{refs:,} conversation refs of {len(before) - 1:,}, the catalog {'again' if catalog else 'not'}")
        else:
            git_clone = None
            print(f"  lazy stores only: no full convo clone nor git clone --bare: {why_lazy_only(n, cache, hub)}")

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
        against = (f" against git clone --bare {git_clone:.2f} s ({git_clone / fetch_one:.0f}x faster)"
                   if git_clone else "")
        print(f"  one conversation's ref fetched alone: {mib(got)} received, its own objects packed "
              f"{mib(own)} ({got / own:.2f}x; goal <= 1.2x + the catalog); {fetch_one:.2f} s{against}")

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
        lazy_list = [r.convo(lazy, "list")[0] for _ in range(2)]
        if lazy_only:
            print(f"  list in the lazy store: {lazy_list[1]:.3f} s (first {lazy_list[0]:.3f} s); against a full "
                  f"store of this size: not measured, there is none (above)")
            lazy_push_pull(r, root, base, url, cid, ref, lazy, one, cat, push_binary or binary)
            return
        full_list = [r.convo(store, "list")[0] for _ in range(2)]
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
        stop(child, root, keep)


def lazy_push_pull(r: Run, root: Path, base: str, url: str, cid: str, ref: str, lazy: Path, one: Path,
                   cat: Path, binary: Path) -> None:
    """Steps 4-5 from lazy stores only: a teammate's lazy store that fetched the same
    conversation appends one event and pushes (anchor: `git push` of a one-commit change
    from a scratch repository to a scratch ref of the same hub: the same advertisement of
    every ref, the same one-commit pack); then the first lazy store pulls (anchor: what a
    lazy store needs, fetched by git into repositories that hold the previous state: the
    catalog, `--depth 1`, into the catalog-only repository of step 3, and the
    conversation's ref into the one-ref repository of step 2)."""
    relay = Relay(int(base.rsplit(":", 1)[1]))
    url = f"git://127.0.0.1:{relay.port}/hub.git"
    teammate = root / "c"
    r.convo(teammate, "clone", "--lazy", url, str(teammate), binary=binary)
    r.convo(teammate, "show", cid, binary=binary)
    r.convo(teammate, "append", cid, "--user", "one more from c", binary=binary)
    # The anchor first, while the hub still advertises the snapshot its commit is made on.
    scratch = root / "scratch"
    r.run("git", "init", "-q", "-b", "main", scratch)
    r.run("git", "-C", scratch, "fetch", "-q", "--no-tags", one, f"+{ref}:refs/heads/snapshot")
    r.run("git", "-C", scratch, "checkout", "-q", "snapshot")
    last = sorted((scratch / "conversations").rglob("*.jsonl"))[-1]
    with last.open("a") as f:
        f.write(json.dumps({"id": "01" + "0" * 24, "ts": "2026-01-01T00:00:00.000Z", "type": "user",
                            "content": "one more from the scratch repository"}, separators=(",", ":")) + "\n")
    r.run("git", "-C", scratch, "commit", "-qam", "one event")
    relay.take()
    git_push, _ = r.run("git", "-C", scratch, "push", "-q", url, "snapshot:refs/bench/scratch")
    git_push_wire = relay.take()
    push, said = r.convo(teammate, "push", binary=binary, check=False)
    push_wire = relay.take()
    if push is None:
        print(f"  push of one appended event from a lazy store: refused by {binary.name}: "
              f"{said.strip().splitlines()[0] if said.strip() else '?'}; git push of a one-commit change to a "
              f"scratch ref {git_push:.2f} s (sent {mib(git_push_wire[1])}, heard {mib(git_push_wire[0])})")
        return
    print(f"  push of one appended event from a lazy store: convo {push:.2f} s, git push of a one-commit change "
          f"to a scratch ref {git_push:.2f} s ({push / git_push:.2f}x; issue goal <= 1 s); over the wire convo "
          f"sent {mib(push_wire[1])} and heard {mib(push_wire[0])} (the refs advertised), git sent "
          f"{mib(git_push_wire[1])} and heard {mib(git_push_wire[0])}")
    r.run("git", "-C", lazy, "remote", "set-url", "origin", url)
    before = packs(lazy)
    relay.take()
    pull, said = r.convo(lazy, "pull", binary=binary, check=False)
    pull_wire = relay.take()[0]
    if pull is None:
        print(f"  pull in the first lazy store: failed: {said.strip()}")
        return
    pulled = packs(lazy) - before
    # Whether the pull brought the event, or the next read fetches it (then paid there).
    before = packs(lazy)
    show, shown = r.convo(lazy, "show", cid, binary=binary)
    show_wire = relay.take()[0]
    show_disk = packs(lazy) - before
    got = "one more from c" in shown
    before = packs(cat) + packs(one)
    relay.take()
    fetch_cat, _ = r.run("git", "-C", cat, "fetch", "-q", "--no-tags", "--depth=1", url,
                         "+refs/convo/catalog:refs/convo/catalog")
    cat_wire = relay.take()[0]
    fetch_one, _ = r.run("git", "-C", one, "fetch", "-q", "--no-tags", url, f"+{ref}:{ref}")
    fetch_wire = cat_wire + relay.take()[0]
    fetched = packs(cat) + packs(one) - before
    print(f"  pull of that event in the first lazy store: convo {mib(pull_wire)} received ({mib(pulled)} on disk) "
          f"in {pull:.2f} s (then show ID: the event {'shown' if got else 'NOT shown'}, {mib(show_wire)} "
          f"received, {mib(show_disk)} on disk, {show:.2f} s), git fetch of the new catalog "
          f"(--depth 1) + the conversation's new ref into repositories holding the previous ones "
          f"{mib(fetch_wire)} ({mib(fetched)} on disk; the catalog {mib(cat_wire)} of it over the wire, "
          f"{fetch_cat:.2f} s) in {fetch_cat + fetch_one:.2f} s "
          f"({pull / (fetch_cat + fetch_one):.2f}x; issue goal <= 50 KB, <= 1 s)")


def check_publish(n: int, captures: int, binary: Path, seed: int, cache: Path | None, branch_files: bool,
                  keep: bool) -> None:
    """`publish` against convo itself: convo's own first push into one copy of the
    generated hub, `publish` into another; every ref and the catalog's files must be the
    same objects. Then a full `convo clone` of the published hub and its `convo push` must
    publish nothing, and a lazy clone must list and show."""
    root = Path(tempfile.mkdtemp(prefix=f"convo-hub-check-{n}-"))
    r = Run(root, binary)
    print(f"\n== publish checked against convo's first push, {n:,} conversations ==")
    built = cached_hub(root / "convo.git", n, captures, seed, r.env, cache)
    published_hub(root / "ours.git", n, captures, seed, r.env, cache, branch_files)
    child, base = daemon(root, r.env)
    try:
        store = root / "a"
        r.convo(store, "clone", f"{base}/convo.git", str(store))
        first, _ = r.convo(store, "push")
        theirs, ours = refs_of(r, root / "convo.git"), refs_of(r, root / "ours.git")
        differ = sorted(ref for ref in theirs.keys() | ours.keys()
                        if ref != "refs/convo/catalog" and theirs.get(ref) != ours.get(ref))
        print(f"  convo's first push published {len(theirs) - 1:,} conversation refs in {first:.1f} s; publish "
              f"wrote {len(ours) - 1:,}; {len(differ)} differ{' e.g. ' + differ[0] if differ else ''}")
        files = lambda repo: dict(l.split(None, 3)[3:] + l.split()[2:3] for l in
                                  r.run("git", "-C", repo, "ls-tree", "refs/convo/catalog")[1].splitlines())
        theirs_files, ours_files = files(root / "convo.git"), files(root / "ours.git")
        fans = sorted(f for f in theirs_files.keys() | ours_files.keys()
                      if f.endswith(".jsonl") and theirs_files.get(f) != ours_files.get(f))
        extra = sorted(ours_files.keys() - theirs_files.keys())
        same = theirs["refs/convo/catalog"] == ours["refs/convo/catalog"]
        print(f"  catalog: {len(theirs_files)} files from convo, {len(ours_files)} from publish; {len(fans)} fan files "
              f"differ; publish's own files {extra or 'none'}; the commit itself "
              f"{'the same' if same else 'differs'}")
        for fan in fans[:1]:
            a = r.run("git", "-C", root / "convo.git", "cat-file", "-p", f"refs/convo/catalog:{fan}")[1].splitlines()
            b = r.run("git", "-C", root / "ours.git", "cat-file", "-p", f"refs/convo/catalog:{fan}")[1].splitlines()
            for x, y in zip(a, b):
                if x != y:
                    print(f"    convo:   {x}\n    publish: {y}")
                    break
        url = f"{base}/ours.git"
        store = root / "b"
        r.convo(store, "clone", url, str(store))
        before = refs_of(r, root / "ours.git")
        push, said = r.convo(store, "push")
        refs, catalog = moved(before, refs_of(r, root / "ours.git"))
        print(f"  full clone of the published hub, then convo push ({push:.1f} s): {refs} conversation refs "
              f"published, the catalog {'published again' if catalog else 'not'}")
        lazy = root / "lazy"
        r.convo(lazy, "clone", "--lazy", url, str(lazy))
        listed = r.convo(lazy, "list")[1].splitlines()
        cid = built["ids"][n // 2]
        shown = r.convo(lazy, "show", cid)[1].splitlines()
        print(f"  clone --lazy: list shows {len(listed)} lines ({listed[0][:100] if listed else ''}...); show {cid}: "
              f"{len(shown)} lines ({shown[0][:80] if shown else ''}...)")
    finally:
        stop(child, root, keep)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", type=Path, default=DEFAULT_BINARY)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--captures", type=int, default=20)
    parser.add_argument("--seed", type=int, default=43)
    parser.add_argument("--only-generate", action="store_true", help="fill the cache and stop")
    parser.add_argument("--only-publish", action="store_true", help="fill the cache with published hubs and stop")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--cache", type=Path, help="keep generated hubs in this folder and reuse them")
    parser.add_argument("--lazy-only", action="store_true",
                        help=f"lazy stores only, no full clone (the default from {LAZY_ONLY_FROM:,} conversations)")
    parser.add_argument("--branch-files", action="store_true",
                        help="publish the catalog with branch.commit and branch.tree (a convo that reads them)")
    parser.add_argument("--push-binary", type=Path, help="the convo that pushes and pulls from lazy stores")
    parser.add_argument("--check-publish", action="store_true",
                        help="check publish against convo's own first push at each size, then stop")
    args = parser.parse_args()
    if not args.binary.exists():
        sys.exit(f"{args.binary} not found: cargo build --release --bins")
    cache = args.cache.resolve() if args.cache else None
    if args.only_generate or args.only_publish:
        if not cache:
            sys.exit("--only-generate and --only-publish need --cache DIR")
        for n in args.sizes:
            env = Run(Path(tempfile.mkdtemp(prefix=f"convo-hub-{n}-")), args.binary).env
            if args.only_publish:
                built = published_hub(None, n, args.captures, args.seed, env, cache, args.branch_files)
                print(f"{n}: published in {built['publish_s']:.1f} s (ls-tree {built['publish_list_s']:.1f}, read "
                      f"{built['publish_read_s']:.1f}, fast-import {built['publish_import_s']:.1f})")
            else:
                cached_hub(None, n, args.captures, args.seed, env, cache)
            shutil.rmtree(Path(env["HOME"]).parent, ignore_errors=True)
        return
    for n in args.sizes:
        if args.check_publish:
            check_publish(n, args.captures, args.binary.resolve(), args.seed, cache, args.branch_files, args.keep)
            continue
        bench(n, args.captures, args.binary.resolve(), args.seed, args.keep, cache,
              args.lazy_only or n >= LAZY_ONLY_FROM, args.branch_files,
              args.push_binary.resolve() if args.push_binary else None)


if __name__ == "__main__":
    main()
