#!/usr/bin/env python3
"""Benchmarks for the convo store, each measured against an anchor taken in the same run.

How to run (from the repository root)::

    cargo build --release --bins --example append_floor && python3 benches/store.py

    python3 benches/store.py path/to/convo          # another binary
    python3 benches/store.py --only latency log     # a subset (latency, storage, log)
    python3 benches/store.py --keep                 # leave the temporary stores behind

The script builds nothing: it drives an existing `convo` binary (default
`target/release/convo`) and the `git` CLI as separate processes, exactly as a user would,
and prints raw numbers, ratios, and a PASS/FAIL summary table.  Python 3.11, stdlib only.
The exit status is 0 when every target passes, 1 otherwise.  A full run takes a few
minutes; most of it is spent building the 20,000-commit store of the `log` measurement.

Everything happens in a fresh directory under /tmp (removed at the end unless --keep) with
HOME pointing into it, GIT_CONFIG_NOSYSTEM=1, and a fixed git identity, so neither the
user's git configuration nor their convo store is touched.  Event content is deterministic
(random.Random(seed)); event ids and timestamps are convo's own.

Measurements
------------
1. Append latency (`latency`).  Wall time of one whole `convo append ID` process that reads
   one ~2 KB turn (a user + assistant JSONL pair) from stdin, with 100 and
   with 10,000 turns of history in the conversation.  The history is built in bulk (1,000
   turns per `convo append`): convo packs lines into 16 KiB segments whatever the batch
   size, so this yields the same layout as one append per turn.
   Anchor: the same change made with the git CLI in a plain git repository holding the same
   files and an equivalent history (the convo working tree is copied over and committed
   with `git add -A && git commit` after each bulk append): append the same ~2 KB to the
   open segment file (rolling over at 16 KiB as convo does), then `git add FILE` and
   `git commit -q -m MSG`, two processes, timed together.  Each side runs as a `sh` loop of
   8 operations (as a user or an agent runs commands; this keeps Python's own ~1 ms per
   spawned process out of both sides), the two sides alternating by round, and the median
   of 5 rounds is reported, so drift in machine load hits both alike.  The CPU time
   (user + system) of each side's processes is printed beside the wall time, for
   information: it is the steadier of the two on a busy machine.
   Printed for information beside them, run the same way in the same rounds and divided by
   git's time: `convo --version` (starting the binary, before an append does anything) and
   `append_floor` (benches/append_floor.rs: a std-only process that makes just the file
   changes an append's commit requires: 8 loose objects, the ref lock and reflogs, the
   work-tree append, the index; built by `cargo build --release --example append_floor`,
   skipped when absent).  Together they bound from below what any append can reach here.
   Targets: convo/git < 1 (an append under git's own `add` + `commit`) and latency@10,000 /
   latency@100 <= 1.5 (flat in the conversation's size).  An older goal of 0.25 was retired
   in issue 30: the two floors alone come to 0.45 of git at 100 turns here.

2. Storage (`storage`).  Automatic gc is off (`gc.auto 0` right after `convo init`), and
   the history is built with one `convo append` process per ~2 KB turn, as a real session
   would.  The size of `.git` is the sum of the file sizes under it, except `.git/convo`
   (a local, disposable cache).  Bytes one append adds to `.git` are averaged over a window
   of 64 appends centred on turn 100 and on turn 2,000.
   Targets: per-append growth at 2,000 / at 100 <= 1.2, and `.git` after 2,000 turns
   <= 3 x the raw JSONL bytes (the event files in the working tree under conversations/).

3. Per-conversation log (`log`).  A store of 50 conversations x 400 single-turn appends,
   appended round-robin so the histories interleave (20,050 commits), built with automatic
   gc off (see bench_log for why).  Then `git gc` and
   `git commit-graph write --reachable --changed-paths`, which gives git its best case
   (commit graph plus Bloom filters of changed paths).  For a few conversations, median
   wall time of `convo log ID --no-pager` against the anchor
   `git log --oneline -- conversations/ID`, both with stdout to /dev/null, alternating.
   Target: git/convo >= 10 for every conversation sampled (the worst one is reported).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BINARY = REPO_ROOT / "target" / "release" / "convo"
# benches/append_floor.rs, built as an example; measured when present.
FLOOR_BINARY = REPO_ROOT / "target" / "release" / "examples" / "append_floor"

SEGMENT_BYTES = 16 * 1024  # convo's layout::SEGMENT_BYTES
SEGMENTS_PER_GROUP = 64  # convo's layout::SEGMENTS_PER_GROUP
TURN_BYTES = 2048  # input JSONL bytes of one "~2 KB" user + assistant pair
SMALL_TURN_BYTES = 160  # the turns of the 20,000-append log store

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


# --------------------------------------------------------------------------------------
# Deterministic content
# --------------------------------------------------------------------------------------


class Turns:
    """User + assistant pairs of prose-like text from a Zipf-weighted made-up vocabulary.

    Zipf weights make the text compress roughly like real prose, which matters for the
    storage measurement (git stores zlib-compressed objects).
    """

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        syllables = [c + v for c in "bcdfghjklmnprstvwz" for v in "aeiou"]
        words = set()
        while len(words) < 3000:
            words.add("".join(self.rng.choices(syllables, k=self.rng.randint(1, 4))))
        self.words = sorted(words)
        self.rng.shuffle(self.words)
        self.weights = [1 / (rank + 1) for rank in range(len(self.words))]

    def _text(self, length: int) -> str:
        out: list[str] = []
        size = 0
        while size < length:
            sentence = self.rng.choices(self.words, self.weights, k=self.rng.randint(4, 18))
            s = " ".join(sentence).capitalize() + ". "
            out.append(s)
            size += len(s)
        return "".join(out)[:length]

    def events(self, total_bytes: int) -> list[dict]:
        """One turn whose two compact JSONL input lines total `total_bytes`."""
        overhead = len('{"type":"user","content":""}\n{"type":"assistant","content":""}\n')
        text = total_bytes - overhead
        user = text // 4
        return [
            {"type": "user", "content": self._text(user)},
            {"type": "assistant", "content": self._text(text - user)},
        ]

    def jsonl(self, total_bytes: int, count: int = 1) -> bytes:
        """`count` turns as the JSONL `convo append` reads."""
        lines = [to_line(e) for _ in range(count) for e in self.events(total_bytes)]
        return "".join(lines).encode()

    def stored_lines(self, events: list[dict]) -> list[str]:
        """The lines as convo stores them: `id` and `ts` first (same lengths as convo's)."""
        ts = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        out = []
        for event in events:
            fake_ulid = "".join(self.rng.choices(CROCKFORD, k=26))
            out.append(to_line({"id": fake_ulid, "ts": ts, **event}))
        return out


def to_line(event: dict) -> str:
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n"


# --------------------------------------------------------------------------------------
# Processes, timing, sizes
# --------------------------------------------------------------------------------------


@dataclass
class Bench:
    """The sandbox: a temporary root, the environment every process gets, the binary."""

    root: Path
    convo_bin: Path
    env: dict[str, str]
    reps: int

    @classmethod
    def create(cls, convo_bin: Path, reps: int, parent: Path) -> Bench:
        root = Path(tempfile.mkdtemp(prefix="convo-bench-", dir=parent))
        home = root / "home"
        home.mkdir()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "Bench",
            "GIT_AUTHOR_EMAIL": "bench@example.com",
            "GIT_COMMITTER_NAME": "Bench",
            "GIT_COMMITTER_EMAIL": "bench@example.com",
            "LC_ALL": "C",
            "NO_COLOR": "1",
        }
        return cls(root, convo_bin, env, reps)

    def run(self, *cmd: str | Path, stdin: bytes | None = None, cwd: Path | None = None,
            capture: bool = False) -> str:
        result = subprocess.run(
            [str(c) for c in cmd],
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=self.env,
        )
        if result.returncode != 0:
            sys.exit(f"command failed ({result.returncode}): {' '.join(map(str, cmd))}\n"
                     f"{result.stderr.decode(errors='replace')}")
        return result.stdout.decode() if capture else ""

    def convo(self, store: Path, *args: str, stdin: bytes | None = None,
              capture: bool = False) -> str:
        return self.run(self.convo_bin, "--store", store, "--color", "never", *args,
                        stdin=stdin, capture=capture)

    def git(self, repo: Path, *args: str, capture: bool = False) -> str:
        return self.run("git", "-C", repo, *args, capture=capture)

    def new_store(self, name: str) -> Path:
        store = self.root / name
        self.convo(store, "init", str(store))
        return store

    def new_conversation(self, store: Path, title: str) -> str:
        out = self.convo(store, "new", "--title", title, capture=True)
        # `new` prints the id alone on stdout (the `[ID HASH] subject` line goes to stderr).
        match = re.match(r"\[?([0-9A-HJKMNP-TV-Z]{26})\b", out)
        if not match:
            sys.exit(f"cannot read the conversation id from `convo new`: {out!r}")
        return match.group(1)


def timed(fn) -> float:
    """Wall time of fn() in milliseconds."""
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def timed_with_cpu(fn) -> tuple[float, float]:
    """Wall time and CPU time (user + system, of the child processes fn() waited for) of
    fn(), in milliseconds. CPU time is the steadier figure on a busy machine; wall time also
    holds what the processes waited for (the disk: a filesystem mounted with `discard`
    waits for the device on every freed block)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = timed(fn)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu


def git_dir_bytes(store: Path) -> int:
    """Sum of file sizes under .git, except .git/convo (a local, disposable cache)."""
    git_dir = store / ".git"
    total = 0
    for dirpath, dirnames, filenames in os.walk(git_dir):
        if Path(dirpath) == git_dir and "convo" in dirnames:
            dirnames.remove("convo")
        total += sum(os.lstat(os.path.join(dirpath, f)).st_size for f in filenames)
    return total


def git_dir_breakdown(store: Path) -> dict[str, int]:
    """The same sum split by top-level entry: objects, logs (reflogs), index, the rest."""
    parts = {"objects": 0, "logs": 0, "index": 0, "other": 0}
    for entry in (store / ".git").iterdir():
        if entry.name == "convo":
            continue
        if entry.is_dir():
            size = sum(p.stat().st_size for p in entry.rglob("*") if p.is_file())
        else:
            size = entry.stat().st_size
        parts[entry.name if entry.name in parts else "other"] += size
    return parts


def jsonl_bytes(store: Path) -> int:
    """Raw bytes of the event files in the working tree."""
    return sum(p.stat().st_size for p in (store / "conversations").glob("*/*/events/*/*.jsonl"))


def filesystem_of(path: Path) -> str:
    """The filesystem type holding `path` (results depend on it: renames, page cache)."""
    best, fstype = "", "unknown"
    try:
        with open("/proc/self/mounts") as mounts:
            for line in mounts:
                fields = line.split()
                mount_point = fields[1]
                if str(path).startswith(mount_point) and len(mount_point) > len(best):
                    best, fstype = mount_point, fields[2]
    except OSError:
        pass
    return fstype


def progress(message: str) -> None:
    print(f"  .. {message}", file=sys.stderr, flush=True)


def fmt_bytes(n: float) -> str:
    return f"{n / 1024:,.1f} KiB" if n < 1024 * 1024 else f"{n / 1024 / 1024:,.2f} MiB"


@dataclass
class Result:
    metric: str
    value: float
    target: str
    passed: bool
    unit: str = "x"


# --------------------------------------------------------------------------------------
# 1. Append latency
# --------------------------------------------------------------------------------------


class GitAnchor:
    """A plain git repository mirroring a convo store's files, changed with the git CLI."""

    def __init__(self, bench: Bench, repo: Path, store: Path, cid: str):
        self.bench, self.repo, self.store, self.cid = bench, repo, store, cid
        bench.run("git", "init", "-q", "-b", "main", repo)

    def mirror(self, message: str) -> None:
        """Copy the store's working tree over (new or grown files) and commit it."""
        src_root = self.store / "conversations"
        for src in src_root.rglob("*"):
            if src.is_dir():
                continue
            dst = self.repo / "conversations" / src.relative_to(src_root)
            if not dst.exists() or dst.stat().st_size != src.stat().st_size:
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)
        self.bench.git(self.repo, "add", "-A")
        self.bench.git(self.repo, "commit", "-q", "-m", message)
        for attr in ("open_n", "open_size"):
            self.__dict__.pop(attr, None)

    def _segment_path(self, n: int) -> Path:
        return (self.repo / "conversations" / self.cid[-2:] / self.cid / "events"
                / f"{n // SEGMENTS_PER_GROUP:04}" / f"{n:06}.jsonl")

    def _open_segment(self) -> int:
        names = (self.repo / "conversations" / self.cid[-2:] / self.cid / "events").glob("*/*.jsonl")
        return max((int(p.stem) for p in names), default=0)

    def script(self, lines: list[str]) -> list[str]:
        """Shell commands appending `lines` to the open segment as convo would (rolling over
        at SEGMENT_BYTES), then `git add` and `git commit`: builtins but the two git
        processes. Scripts are built ahead of running, so the open segment is tracked here."""
        if not hasattr(self, "open_n"):
            self.open_n = self._open_segment()
            path = self._segment_path(self.open_n)
            self.open_size = path.stat().st_size if path.exists() else 0
        out, touched = [], []
        for line in lines:
            if self.open_size > 0 and self.open_size + len(line.encode()) > SEGMENT_BYTES:
                self.open_n, self.open_size = self.open_n + 1, 0
            path = self._segment_path(self.open_n)
            path.parent.mkdir(parents=True, exist_ok=True)
            rel = str(path.relative_to(self.repo))
            out.append(f"printf '%s' {shell_quote(line)} >> {shell_quote(rel)}")
            self.open_size += len(line.encode())
            if rel not in touched:
                touched.append(rel)
        out.append("git add -- " + " ".join(shell_quote(t) for t in touched))
        out.append("git commit -q -m 'append one turn'")
        return out

    def append(self, lines: list[str]) -> None:
        """Append lines to the open segment (rolling over like convo), add, commit."""
        n = self._open_segment()
        path = self._segment_path(n)
        size = path.stat().st_size if path.exists() else 0
        touched = []
        for line in lines:
            data = line.encode()
            if size > 0 and size + len(data) > SEGMENT_BYTES:
                n, size = n + 1, 0
                path = self._segment_path(n)
                path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "ab") as f:
                f.write(data)
            size += len(data)
            if path not in touched:
                touched.append(path)
        rel = [str(p.relative_to(self.repo)) for p in touched]
        self.bench.git(self.repo, "add", "--", *rel)
        self.bench.git(self.repo, "commit", "-q", "-m", "append one turn")


def shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


@dataclass
class AppendTimes:
    """Mean ms per operation of each side of [`measure_append_pair`]."""

    convo: float
    git: float
    convo_cpu: float
    git_cpu: float
    start: float
    floor: float | None


def measure_append_pair(bench: Bench, turns: Turns, store: Path, cid: str,
                        anchor: GitAnchor, rounds: int = 5, per_round: int = 8) -> AppendTimes:
    """Mean ms of one single-turn `convo append` and of one git anchor append, taken as
    the median over `rounds` of `per_round` operations run back to back by one `sh`, the
    sides alternating by round. A shell loop is how a user or an agent runs commands;
    it keeps Python's own process-spawning cost (about 1 ms a process) out of every side.
    Wall ms (convo, git), CPU ms (convo, git; the `sh` included on both), and two floors
    run the same way in the same rounds: `convo --version`, what starting the binary costs
    before an append does anything, and `append_floor` (benches/append_floor.rs, when
    built), a small process making only the file changes an append's commit requires."""
    sides: dict[str, list[float]] = {k: [] for k in ("convo", "git", "convo_cpu", "git_cpu", "start", "floor")}
    env = {**bench.env, "CONVO_DIR": str(store)}
    floor_dir = bench.root / "append-floor"

    def run(script: str, cwd: Path | None = None) -> tuple[float, float]:
        return timed_with_cpu(lambda: subprocess.run(["sh", "-ec", script], cwd=cwd, env=env, check=True,
                                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    for r in range(rounds + 1):
        inputs, git_lines = [], []
        for i in range(per_round):
            events = turns.events(TURN_BYTES)
            path = bench.root / f"turn-{r}-{i}.jsonl"
            path.write_bytes("".join(to_line(e) for e in events).encode())
            inputs.append(path)
            git_lines.extend(anchor.script(turns.stored_lines(events)))
        convo = shell_quote(str(bench.convo_bin))
        c, c_cpu = run("\n".join(f"{convo} --color never append {cid} < {shell_quote(str(p))}" for p in inputs))
        g, g_cpu = run("\n".join(git_lines), cwd=anchor.repo)
        start, _ = run("\n".join(f"{convo} --version" for _ in inputs))
        floor = None
        if FLOOR_BINARY.exists():
            floor, _ = run("\n".join(f"{shell_quote(str(FLOOR_BINARY))} {shell_quote(str(floor_dir))}"
                                     for _ in inputs))
        if r > 0:  # the first round warms caches
            for key, value in (("convo", c), ("git", g), ("convo_cpu", c_cpu), ("git_cpu", g_cpu),
                               ("start", start), ("floor", floor)):
                if value is not None:
                    sides[key].append(value / per_round)
    median = {k: statistics.median(v) if v else None for k, v in sides.items()}
    return AppendTimes(**median)


def bench_latency(bench: Bench, turns: Turns) -> list[Result]:
    """Measurement 1: single-turn append latency at 100 and 10,000 turns of history."""
    print("\n== 1. append latency (one ~2 KB turn, whole process) ==")
    store = bench.new_store("latency")
    cid = bench.new_conversation(store, "bench")
    anchor = GitAnchor(bench, bench.root / "latency-git", store, cid)
    anchor.mirror("new conversation")

    history = 0
    medians, cpu, floors = {}, {}, {}
    for size in (100, 10_000):
        start = time.perf_counter()
        while history < size:
            batch = min(1000, size - history)
            bench.convo(store, "append", cid, stdin=turns.jsonl(TURN_BYTES, batch))
            anchor.mirror(f"append {batch} turns")
            history += batch
        progress(f"history of {history} turns built in {time.perf_counter() - start:.1f} s")
        t = measure_append_pair(bench, turns, store, cid, anchor)
        medians[size] = (t.convo, t.git)
        cpu[size] = (t.convo_cpu, t.git_cpu)
        floors[size] = (t.start / t.git, t.floor / t.git if t.floor is not None else None)
        # The measured appends (warm-up included) add to the history.
        history += 6 * 8
        print(f"  history {size:>6,} turns: convo {t.convo:7.2f} ms   git add+commit "
              f"{t.git:7.2f} ms   convo/git {t.convo / t.git:.4g}   (median of 5 rounds of 8)")
        print(f"  {'':>21} CPU: convo {t.convo_cpu:7.2f} ms   git add+commit "
              f"{t.git_cpu:7.2f} ms   convo/git {t.convo_cpu / t.git_cpu:.4g}   (user + system)")
        print(f"  {'':>21} floors: convo --version {t.start:5.2f} ms = {t.start / t.git:.4g} of git; ", end="")
        if t.floor is None:
            print("append_floor not built (cargo build --release --example append_floor)")
        else:
            print(f"append_floor {t.floor:5.2f} ms = {t.floor / t.git:.4g} of git")

    segments = len(list((store / "conversations" / cid[-2:] / cid / "events").glob("*/*.jsonl")))
    print(f"  store after the run: {history:,} turns in {segments:,} segments, "
          f"{fmt_bytes(jsonl_bytes(store))} of JSONL")
    growth = medians[10_000][0] / medians[100][0]
    print(f"  convo latency@10,000 / latency@100: {growth:.3f}")
    results = []
    for size, (c, g) in medians.items():
        results.append(Result(f"append convo/git @{size:,} turns", c / g, "< 1", c / g < 1))
    results.append(Result("append latency@10k / @100", growth, "<= 1.5", growth <= 1.5))
    info = [Result(f"append latency @{size:,} ({who})", medians[size][i], "info", True, "ms")
            for size in medians for i, who in enumerate(("convo", "git anchor"))]
    info += [Result(f"append CPU convo/git @{size:,} turns", c / g, "info", True) for size, (c, g) in cpu.items()]
    info += [Result(f"start (--version)/git @{size:,} turns", f, "info", True) for size, (f, _) in floors.items()]
    info += [Result(f"append_floor/git @{size:,} turns", f, "info", True)
             for size, (_, f) in floors.items() if f is not None]
    return info + results


# --------------------------------------------------------------------------------------
# 2. Storage
# --------------------------------------------------------------------------------------


def bench_storage(bench: Bench, turns: Turns) -> list[Result]:
    """Measurement 2: .git growth per append (early vs late) and .git vs raw JSONL."""
    print("\n== 2. storage (gc.auto 0, one `convo append` process per ~2 KB turn) ==")
    store = bench.new_store("storage")
    bench.git(store, "config", "gc.auto", "0")
    cid = bench.new_conversation(store, "bench")

    windows = {100: (68, 132), 2000: (1968, 2032)}
    checkpoints = {t for w in windows.values() for t in w} | {2000}
    sizes: dict[int, int] = {}
    start = time.perf_counter()
    for turn in range(1, max(checkpoints) + 1):
        bench.convo(store, "append", cid, stdin=turns.jsonl(TURN_BYTES))
        if turn in checkpoints:
            sizes[turn] = git_dir_bytes(store)
            if turn == 2000:
                raw_at_2000 = jsonl_bytes(store)
                parts_at_2000 = git_dir_breakdown(store)
        if turn % 500 == 0:
            progress(f"{turn} turns appended, {time.perf_counter() - start:.1f} s")

    per_append = {}
    for around, (lo, hi) in windows.items():
        per_append[around] = (sizes[hi] - sizes[lo]) / (hi - lo)
        print(f"  bytes added to .git per append, turns {lo}-{hi}: "
              f"{per_append[around]:8,.0f} B")
    growth = per_append[2000] / per_append[100]
    amplification = sizes[2000] / raw_at_2000
    print(f"  per-append growth @2000 / @100: {growth:.3f}")
    print(f"  after 2,000 turns: .git {fmt_bytes(sizes[2000])}, raw JSONL "
          f"{fmt_bytes(raw_at_2000)}, .git/JSONL {amplification:.2f}")
    print("  .git after 2,000 turns by part: "
          + ", ".join(f"{name} {fmt_bytes(size)}" for name, size in parts_at_2000.items()))
    return [
        Result("storage bytes/append @100", per_append[100], "info", True, "B"),
        Result("storage bytes/append @2000", per_append[2000], "info", True, "B"),
        Result("storage bytes/append @2000 / @100", growth, "<= 1.2", growth <= 1.2),
        Result(".git / raw JSONL after 2,000 turns", amplification, "<= 3", amplification <= 3),
    ]


# --------------------------------------------------------------------------------------
# 3. Per-conversation log
# --------------------------------------------------------------------------------------


def bench_log(bench: Bench, turns: Turns, conversations: int = 50,
              appends_each: int = 400) -> list[Result]:
    """Measurement 3: `convo log ID` against git's best path-limited log."""
    print(f"\n== 3. log of one conversation ({conversations} conversations x "
          f"{appends_each} appends, interleaved) ==")
    store = bench.new_store("log")
    # Automatic gc stays off while building: convo starts `git gc --auto`, which detaches,
    # and its prune of packed loose objects can race the next append (seen here as "Could
    # not persist loose object").  The store is gc'ed explicitly below anyway.
    bench.git(store, "config", "gc.auto", "0")
    start = time.perf_counter()
    ids = [bench.new_conversation(store, f"conversation {i}") for i in range(conversations)]
    for round_ in range(appends_each):
        for cid in ids:
            bench.convo(store, "append", cid, stdin=turns.jsonl(SMALL_TURN_BYTES))
        if (round_ + 1) % 50 == 0:
            progress(f"{(round_ + 1) * conversations:,} appends, "
                     f"{time.perf_counter() - start:.1f} s")
    build_s = time.perf_counter() - start
    commits = int(bench.git(store, "rev-list", "--count", "HEAD", capture=True))
    print(f"  built {commits:,} commits with {conversations * appends_each:,} `convo append` "
          f"processes in {build_s:.1f} s ({build_s / (conversations * appends_each) * 1000:.2f}"
          f" ms per append, including Python's process spawn)")

    bench.git(store, "gc", "--quiet")
    bench.git(store, "commit-graph", "write", "--reachable", "--changed-paths")

    sample = [ids[0], ids[len(ids) // 4], ids[len(ids) // 2], ids[3 * len(ids) // 4], ids[-1]]
    ratios = []
    for cid in sample:
        convo_ms, git_ms = [], []
        for i in range(3 + bench.reps):
            c = timed(lambda: bench.convo(store, "log", cid, "--no-pager"))
            g = timed(lambda: bench.git(store, "log", "--oneline", "--",
                                        f"conversations/{cid[-2:]}/{cid}"))
            if i >= 3:
                convo_ms.append(c)
                git_ms.append(g)
        c, g = statistics.median(convo_ms), statistics.median(git_ms)
        ratios.append((g / c, c, g))
        print(f"  {cid}: convo log {c:7.2f} ms   git log -- path {g:7.2f} ms   "
              f"git/convo {g / c:6.2f}")
    worst, c, g = min(ratios)
    return [
        Result("log convo (worst id)", c, "info", True, "ms"),
        Result("log git -- path (same id)", g, "info", True, "ms"),
        Result("log git/convo (worst of 5 ids)", worst, ">= 10", worst >= 10),
    ]


# --------------------------------------------------------------------------------------


def print_summary(results: list[Result]) -> None:
    print("\n== summary ==")
    width = max(len(r.metric) for r in results)
    print(f"  {'metric':<{width}}  {'value':>12}  {'target':>8}  result")
    for r in results:
        if r.unit == "x":
            value = f"{r.value:.4g}"
        elif r.unit == "B":
            value = f"{r.value:,.0f} B"
        else:
            value = f"{r.value:.2f} {r.unit}"
        verdict = "-" if r.target == "info" else ("PASS" if r.passed else "FAIL")
        print(f"  {r.metric:<{width}}  {value:>12}  {r.target:>8}  {verdict}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary", nargs="?", type=Path, default=DEFAULT_BINARY,
                        help=f"the convo binary (default: {DEFAULT_BINARY})")
    parser.add_argument("--only", nargs="+", choices=["latency", "storage", "log"],
                        default=["latency", "storage", "log"], help="measurements to run")
    parser.add_argument("--reps", type=int, default=30, help="timed runs per median")
    parser.add_argument("--seed", type=int, default=20240501, help="content seed")
    parser.add_argument("--tmp", type=Path, default=Path("/tmp"),
                        help="where to create the temporary directory (default: /tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()

    convo_bin = args.binary.resolve()
    if not os.access(convo_bin, os.X_OK):
        sys.exit(f"{convo_bin} is not an executable; build it with `cargo build --release`")
    if shutil.which("git") is None:
        sys.exit("git is not on PATH")

    sys.stdout.reconfigure(line_buffering=True)
    bench = Bench.create(convo_bin, args.reps, args.tmp)
    turns = Turns(args.seed)
    version = bench.run("git", "--version", capture=True).strip()
    print(f"convo: {convo_bin}\n{version}; temporary root {bench.root} "
          f"({filesystem_of(bench.root)}); seed {args.seed}; {os.cpu_count()} CPUs")
    started = time.perf_counter()
    results: list[Result] = []
    try:
        if "latency" in args.only:
            results += bench_latency(bench, turns)
        if "storage" in args.only:
            results += bench_storage(bench, turns)
        if "log" in args.only:
            results += bench_log(bench, turns)
    finally:
        if args.keep:
            print(f"\nkept {bench.root}")
        else:
            shutil.rmtree(bench.root, ignore_errors=True)
    print_summary(results)
    print(f"\ntotal time {time.perf_counter() - started:.0f} s")
    return 0 if all(r.passed for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
