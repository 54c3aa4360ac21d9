#!/usr/bin/env python3
"""Scale benchmarks (issue 14): a store of 10,000 conversations and a 5,000-turn conversation.

How to run (from the repository root)::

    cargo build --release && python3 benches/scale.py

    python3 benches/scale.py path/to/convo        # another binary
    python3 benches/scale.py --only list memory   # a subset (names or numbers, see below)
    python3 benches/scale.py --only list usage    # the usage report beside `list`
    python3 benches/scale.py --keep               # leave the temporary stores behind

The script builds nothing: it drives an existing `convo` binary (default
`target/release/convo`), `git`, `jq` and Python as separate processes, exactly as a user
would, and prints raw numbers, ratios against each goal, and a PASS/FAIL summary table.
Python 3.11, stdlib only.  The exit status is 0 when every goal is met, 1 otherwise.  A
full run takes about 80 s on 2 cores (the stores take ~20 s to build).

Everything happens in a fresh directory under /tmp (removed at the end unless --keep) with
HOME pointing into it, GIT_CONFIG_NOSYSTEM=1, and a fixed git identity, so neither the
user's git configuration nor their convo store is touched.  Conversations come from
../shared/tools/gen-conversation.py (deterministic for a seed: user, reasoning, tool calls
and results, assistant); single appended turns are ~2 KB user + assistant pairs of
deterministic prose.  Event ids and timestamps are convo's own.

Timing: a figure compared against an anchor alternates the two sides round by round (A B,
then B A, ...), drops a first warm-up round, and reports the median of --rounds rounds
(5).  Commands that take a few milliseconds run as a `sh` loop of several invocations
per sample (the mean per invocation is the sample), which keeps Python's own process
spawn out of both sides.  Every command writes stdout to /dev/null.  Peak memory is the
child's maximum resident set size as os.wait4 reports it (what /usr/bin/time -f %M
prints); the goal is 40 MiB.

Stores
------
* 10k store: `convo init`, one real conversation ("scale target": `convo new` + one bulk
  `convo append` of gen-conversation.py --turns 100), then 9,999 more conversations added
  in ONE `git fast-import` commit on top of HEAD: each is a template conversation made by
  convo in a scratch store (one ~2 KB turn whose answer is two Claude-Code-style events of
  one API message, each with `model`, `message_id` and the message's `usage`, the second
  counting), its meta.json with a distinct title and
  created time, its segment bytes as they are; ids are canonical ULIDs whose time part
  matches `created` (all before the target's).  Then `git reset --hard`, and the store is
  checked: `convo list` prints 10,000 lines and `convo fsck` exits 0 (its time is printed).
  Note that the 9,999 conversations share one commit: what scales here is the number of
  conversations in HEAD's tree, not the number of commits.
* 1-conversation store: `convo init` and the same target conversation built the same way.
* big store: `convo init`, gc.auto 0 (so `git gc --auto` memory is not counted as
  convo's), `convo new` + ONE bulk `convo append` of gen-conversation.py --turns 5000
  (~56 MB of JSONL).  Not packed afterwards (as a user's store is after one big append).

Measurements
------------
1. `list` (`list`): wall time of `convo list` in the 10k store.  Reported: the first run
   after the build (no catalogue, no per-conversation cache: every conversation is read),
   a run with `.git/convo/catalogue` deleted again (per-conversation caches kept), and the
   warm median of --rounds runs.  Goal (warm): <= 0.2 s and <= 20 us per conversation.
   The cold runs are printed against the same goal for information, not judged.
2. Name resolution (`resolve`): `show NAME` and `log NAME` in the 10k store with NAME the
   exact title, and the first 12 characters of the id, each against the same command with
   the full id (loops of 5).  Goal: name/full-id <= 1.2.
3. Store size (`size`): `append` (one ~2 KB turn from stdin, loops of 3), `show ID` and
   `log ID` (loops of 5) of the target conversation in the 10k store against the
   1-conversation store.  Both targets receive the same appends, alternately.
   Goal: 10k/1 <= 1.2 each.
4. Compaction (`compact`): `compact ID` and `compact ID --dry-run` (default profile) of the
   5,000-turn conversation against one `append` of a ~2 KB turn to the same conversation in
   the same rounds.  `--dry-run` and `append` run on the big store itself; each real
   `compact` runs on a fresh `cp -a` copy of the big store (copy not timed, and synced to
   disk before the timing starts, so its writeback is not charged to compact), so every
   round compacts the same uncompacted history.  Goal: compact/append <= 5 and
   dry-run/append <= 5.
5. Peak memory (`memory`), on the big store with one compaction in force: `show --format
   jsonl`, `show --compacted --format jsonl`, `export --format jsonl`, the bulk `append`
   of the whole ~56 MB file into a new conversation (the big store's build), and `compact`
   of the 5,000-turn conversation (the real one on the big store, which puts the
   compaction in force).  The largest peak seen over every run of a command in this script
   is reported.  Goal: <= 40 MiB each.
6. `show --format jsonl` throughput (`show`): MB of output per second on the big
   conversation.  Anchor: `python3` reading the same stored lines (the output of `show
   --format jsonl`, saved once) and writing json.dumps(json.loads(line),
   separators=(",", ":"), ensure_ascii=False) per line.  Goal: convo/Python MB/s >= 5.
7. `show --compacted --format jsonl` throughput (`compacted`): the conversation's stored
   JSONL bytes per second (its output is smaller than its input, so both sides are
   measured by the same input), against `jq -c .` over the same stored lines.
   Goal: convo/jq >= 10.
8. `usage` (`usage`): wall time of `convo usage --by model` and `convo usage --by day` in
   the 10k store (every conversation but the target records usage), beside `convo list`
   in the same rounds.  Reported: the first run with `.git/convo/usage` deleted (every
   conversation's tally counted from its events; catalogue warm), the warm medians of
   --rounds rounds with their ratio to `list`'s, and (for information) `usage --since` a
   second after midnight of the day the calls were made: a bound inside a day, so every
   conversation with calls that day is read call by call, as every `usage` did before the
   tally.  Goal (warm): <= 0.5 s each.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BINARY = REPO_ROOT / "target" / "release" / "convo"
GENERATOR = REPO_ROOT.parent / "shared" / "tools" / "gen-conversation.py"

TURN_BYTES = 2048  # input JSONL bytes of one "~2 KB" user + assistant pair
TARGET_TITLE = "scale target"
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
MEMORY_GOAL_KIB = 40 * 1024

FIGURES = ["list", "resolve", "size", "compact", "memory", "show", "compacted", "usage"]


# --------------------------------------------------------------------------------------
# Content
# --------------------------------------------------------------------------------------


class Prose:
    """Deterministic ~2 KB user + assistant pairs, as `convo append` reads them."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        syllables = [c + v for c in "bcdfghjklmnprstvwz" for v in "aeiou"]
        self.words = sorted({"".join(self.rng.choices(syllables, k=self.rng.randint(1, 4)))
                             for _ in range(3000)})
        self.weights = [1 / (rank + 1) for rank in range(len(self.words))]

    def _text(self, length: int) -> str:
        out, size = [], 0
        while size < length:
            s = " ".join(self.rng.choices(self.words, self.weights,
                                          k=self.rng.randint(4, 18))).capitalize() + ". "
            out.append(s)
            size += len(s)
        return "".join(out)[:length]

    def turn(self, total_bytes: int = TURN_BYTES) -> bytes:
        overhead = len('{"type":"user","content":""}\n{"type":"assistant","content":""}\n')
        text = total_bytes - overhead
        user = text // 4
        lines = [{"type": "user", "content": self._text(user)},
                 {"type": "assistant", "content": self._text(text - user)}]
        return "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in lines).encode()

    def used_turn(self) -> bytes:
        """A turn whose answer is one API message over two events, as Claude Code's import
        makes them: each with the model, the message id and the message's usage so far
        (the last one counts)."""
        call = {"model": "claude-sonnet-4-20250514", "message_id": "msg_bench"}
        usage = {"input_tokens": 12, "output_tokens": 40, "cache_read_tokens": 20_000,
                 "cache_write_tokens": 1_500}
        lines = [{"type": "user", "content": self._text(400)},
                 {"type": "assistant", "content": self._text(600), **call, "usage": usage},
                 {"type": "assistant", "content": self._text(600), **call,
                  "usage": {**usage, "output_tokens": 350}}]
        return "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in lines).encode()


def ulid(ms: int, rng: random.Random) -> str:
    """A canonical ULID: 48-bit milliseconds then 80 random bits, Crockford base32."""
    value = (ms << 80) | rng.getrandbits(80)
    chars = []
    for _ in range(26):
        chars.append(CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


# --------------------------------------------------------------------------------------
# Processes, timing
# --------------------------------------------------------------------------------------


@dataclass
class Bench:
    root: Path
    convo_bin: Path
    env: dict[str, str]
    rounds: int
    seed: int
    peaks: dict[str, int] = field(default_factory=dict)  # command label -> max RSS KiB

    @classmethod
    def create(cls, convo_bin: Path, rounds: int, seed: int, parent: Path) -> Bench:
        root = Path(tempfile.mkdtemp(prefix="convo-scale-", dir=parent))
        home = root / "home"
        home.mkdir()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "Bench",
            "GIT_AUTHOR_EMAIL": "bench@example.com",
            "GIT_COMMITTER_NAME": "Bench",
            "GIT_COMMITTER_EMAIL": "bench@example.com",
            "LC_ALL": "C",
            "NO_COLOR": "1",
        }
        return cls(root, convo_bin, env, rounds, seed)

    def run(self, *cmd: str | Path, stdin: bytes | None = None, capture: bool = False,
            check: bool = True, timeout: float | None = None) -> subprocess.CompletedProcess:
        result = subprocess.run(
            [str(c) for c in cmd], input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
            stderr=subprocess.PIPE, env=self.env, timeout=timeout)
        if check and result.returncode != 0:
            sys.exit(f"command failed ({result.returncode}): {' '.join(map(str, cmd))}\n"
                     f"{result.stderr.decode(errors='replace')}")
        return result

    def convo(self, store: Path, *args: str, stdin: bytes | None = None,
              capture: bool = False) -> str:
        r = self.run(self.convo_bin, "--store", store, "--color", "never", *args,
                     stdin=stdin, capture=capture)
        return r.stdout.decode() if capture else ""

    def git(self, repo: Path, *args: str, capture: bool = False) -> str:
        r = self.run("git", "-C", repo, *args, capture=capture)
        return r.stdout.decode() if capture else ""

    def convo_cmd(self, store: Path, *args: str) -> list[str]:
        return [str(self.convo_bin), "--store", str(store), "--color", "never", "--no-pager",
                *args]

    def measure(self, label: str | None, cmd: list[str], stdin_path: Path | None = None,
                stdout_path: Path | None = None) -> float:
        """Wall seconds of one process (stdout to /dev/null or a file); its peak RSS is
        kept under `label`.  Exits with the command's stderr if it fails."""
        stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
        stdout = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
        with tempfile.TemporaryFile() as err:
            start = time.perf_counter()
            proc = subprocess.Popen(cmd, stdin=stdin, stdout=stdout, stderr=err, env=self.env)
            _, status, usage = os.wait4(proc.pid, 0)
            elapsed = time.perf_counter() - start
            proc.returncode = os.waitstatus_to_exitcode(status)
            for f in (stdin, stdout):
                if f is not subprocess.DEVNULL:
                    f.close()
            if proc.returncode != 0:
                err.seek(0)
                sys.exit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n"
                         f"{err.read().decode(errors='replace')}")
        if label:
            self.peaks[label] = max(self.peaks.get(label, 0), usage.ru_maxrss)
        return elapsed

    def loop(self, lines: list[str]) -> float:
        """Mean milliseconds per command of a `sh -e` script running `lines` in turn."""
        script = "\n".join(lines)
        start = time.perf_counter()
        r = subprocess.run(["sh", "-ec", script], env=self.env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        elapsed = (time.perf_counter() - start) * 1000
        if r.returncode != 0:
            sys.exit(f"loop failed ({r.returncode}):\n{script[:2000]}\n"
                     f"{r.stderr.decode(errors='replace')}")
        return elapsed / len(lines)

    def new_store(self, name: str) -> Path:
        store = self.root / name
        self.convo(store, "init", str(store))
        return store

    def new_conversation(self, store: Path, title: str) -> str:
        out = self.convo(store, "new", "--title", title, capture=True).strip()
        if len(out) != 26 or any(c not in CROCKFORD for c in out):
            sys.exit(f"cannot read the conversation id from `convo new`: {out!r}")
        return out


def sh(text: str | Path) -> str:
    return "'" + str(text).replace("'", "'\\''") + "'"


def alternate(rounds: int, sides: list) -> list[list[float]]:
    """Run each side (a no-argument function returning one sample) once per round, the
    order reversed every round, after one warm-up round; samples per side."""
    samples: list[list[float]] = [[] for _ in sides]
    for r in range(rounds + 1):
        order = list(range(len(sides)))
        if r % 2:
            order.reverse()
        values = {i: sides[i]() for i in order}
        if r > 0:
            for i, v in values.items():
                samples[i].append(v)
    return samples


def progress(message: str) -> None:
    print(f"  .. {message}", file=sys.stderr, flush=True)


def generate(turns: int, seed: int, path: Path) -> int:
    with open(path, "wb") as out:
        subprocess.run([sys.executable, str(GENERATOR), "--turns", str(turns), "--seed",
                        str(seed)], stdout=out, check=True)
    return path.stat().st_size


@dataclass
class Result:
    metric: str
    value: float
    target: str
    passed: bool
    unit: str = "x"


def judged(metric: str, value: float, goal: float, unit: str, upper: bool = True) -> Result:
    target = f"{'<=' if upper else '>='} {goal:g}{'' if unit == 'x' else ' ' + unit}"
    ok = value <= goal if upper else value >= goal
    return Result(metric, value, target, ok, unit)


def info(metric: str, value: float, unit: str) -> Result:
    return Result(metric, value, "info", True, unit)


# --------------------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------------------


@dataclass
class Scale:
    store: Path  # 10,000 conversations
    single: Path  # the target alone
    target: str  # id in `store`
    single_target: str  # id in `single`
    count: int
    first_list_s: float
    fsck_s: float
    fsck_rc: int
    fsck_out: str


@dataclass
class Big:
    store: Path
    cid: str
    source_bytes: int
    append_s: float
    compacted: bool = False
    stored: Path | None = None  # `show --format jsonl` output, saved once
    stored_bytes: int = 0


class Fixtures:
    def __init__(self, bench: Bench, conversations: int, target_turns: int, big_turns: int):
        self.bench = bench
        self.conversations = conversations
        self.target_turns = target_turns
        self.big_turns = big_turns
        self.prose = Prose(bench.seed)
        self._scale: Scale | None = None
        self._big: Big | None = None

    def turn_file(self, name: str) -> Path:
        path = self.bench.root / "turns" / f"{name}.jsonl"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(self.prose.turn())
        return path

    # -- the 10,000-conversation store -------------------------------------------------

    def scale(self) -> Scale:
        if self._scale is None:
            self._scale = self._build_scale()
        return self._scale

    def _target(self, name: str, history: Path) -> tuple[Path, str]:
        store = self.bench.new_store(name)
        cid = self.bench.new_conversation(store, TARGET_TITLE)
        self.bench.convo(store, "append", cid, stdin=history.read_bytes())
        return store, cid

    def _build_scale(self) -> Scale:
        b = self.bench
        n = self.conversations
        print(f"\n-- building the {n:,}-conversation store --")
        start = time.perf_counter()
        history = b.root / "target-history.jsonl"
        size = generate(self.target_turns, b.seed, history)
        store, target = self._target("scale-10k", history)
        single, single_target = self._target("scale-1", history)
        print(f"  target conversation: {self.target_turns} turns, {size / 1e6:.2f} MB of "
              f"input JSONL, one bulk `convo append` (same in both stores)")

        # A template conversation made by convo, in a scratch store.
        scratch = b.new_store("template")
        tid = b.new_conversation(scratch, "template")
        b.convo(scratch, "append", tid, stdin=self.prose.used_turn())
        tdir = scratch / "conversations" / tid[-2:] / tid
        meta_text = (tdir / "meta.json").read_text()
        meta = json.loads(meta_text)
        files = {p.relative_to(tdir).as_posix(): p.read_bytes()
                 for p in sorted(tdir.rglob("*")) if p.is_file() and p.name != "meta.json"}
        trailing = "\n" if meta_text.endswith("\n") else ""

        # n - 1 conversations in one fast-import commit on top of HEAD.
        branch = b.git(store, "symbolic-ref", "HEAD", capture=True).strip()
        head = b.git(store, "rev-parse", "HEAD", capture=True).strip()
        rng = random.Random(b.seed)
        base = datetime(2025, 1, 1, tzinfo=timezone.utc)
        chunks: list[bytes] = []
        marks = {}
        for i, (rel, data) in enumerate(files.items(), start=1):
            marks[rel] = i
            chunks.append(b"blob\nmark :%d\ndata %d\n" % (i, len(data)) + data + b"\n")
        message = f"bench: {n - 1:,} conversations (git fast-import)\n".encode()
        now = int(time.time())
        chunks.append(b"commit %s\ncommitter Bench <bench@example.com> %d +0000\n"
                      % (branch.encode(), now))
        chunks.append(b"data %d\n" % len(message) + message)
        chunks.append(b"from %s\n" % head.encode())
        ids = set()
        for i in range(n - 1):
            created = base + timedelta(minutes=i)
            ms = int(created.timestamp() * 1000)
            cid = ulid(ms, rng)
            assert cid not in ids and cid[0] in "01234567"
            ids.add(cid)
            m = dict(meta, title=f"conversation {i:05d}",
                     created=created.isoformat(timespec="milliseconds").replace("+00:00", "Z"))
            mdata = (json.dumps(m, indent=2, ensure_ascii=False) + trailing).encode()
            # convo's layout: conversations/<last two characters of the id>/<id>/.
            prefix = f"conversations/{cid[-2:]}/{cid}/".encode()
            chunks.append(b"M 100644 inline %smeta.json\ndata %d\n" % (prefix, len(mdata))
                          + mdata + b"\n")
            for rel in files:
                chunks.append(b"M 100644 :%d %s%s\n" % (marks[rel], prefix, rel.encode()))
        chunks.append(b"\n")
        if any(i.startswith(target[:12]) for i in ids):
            sys.exit("a generated id shares the target's 12-character prefix")
        t0 = time.perf_counter()
        b.run("git", "-C", store, "fast-import", "--quiet", stdin=b"".join(chunks))
        import_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        b.git(store, "reset", "-q", "--hard")
        reset_s = time.perf_counter() - t0

        # First `list`: no catalogue, nothing of the 9,999 ever read by convo.
        (store / ".git" / "convo" / "catalogue").unlink(missing_ok=True)
        out = store / "list-first.txt"
        first = b.measure("list", b.convo_cmd(store, "list"), stdout_path=out)
        count = sum(1 for _ in open(out, "rb"))
        if count != n:
            sys.exit(f"`convo list` printed {count} lines, expected {n}")
        t0 = time.perf_counter()
        try:
            r = b.run(b.convo_bin, "--store", store, "fsck", capture=True, check=False,
                      timeout=300)
            fsck_rc, fsck_out = r.returncode, (r.stdout + r.stderr).decode(errors="replace")
        except subprocess.TimeoutExpired:
            fsck_rc, fsck_out = -1, "timed out after 300 s"
        fsck_s = time.perf_counter() - t0
        print(f"  {n - 1:,} conversations added in one commit: fast-import {import_s:.2f} s, "
              f"reset --hard {reset_s:.2f} s")
        print(f"  check: `convo list | wc -l` = {count:,}; `convo fsck` exit {fsck_rc} in "
              f"{fsck_s:.2f} s")
        if fsck_rc != 0:
            print("  fsck output (first lines):\n    "
                  + "\n    ".join(fsck_out.strip().splitlines()[:10]))
        print(f"  built in {time.perf_counter() - start:.1f} s")
        return Scale(store, single, target, single_target, count, first, fsck_s, fsck_rc,
                     fsck_out)

    # -- the 5,000-turn conversation ---------------------------------------------------

    def big(self) -> Big:
        if self._big is None:
            b = self.bench
            print(f"\n-- building the {self.big_turns:,}-turn conversation --")
            source = b.root / "big-source.jsonl"
            size = generate(self.big_turns, b.seed + 1, source)
            store = b.new_store("big")
            b.git(store, "config", "gc.auto", "0")
            cid = b.new_conversation(store, "big")
            append_s = b.measure("append (bulk, whole file)",
                                 b.convo_cmd(store, "append", cid), stdin_path=source)
            print(f"  {size / 1e6:.1f} MB of input JSONL ({self.big_turns:,} turns) in one "
                  f"`convo append` from stdin: {append_s:.2f} s, {size / 1e6 / append_s:.1f} "
                  f"MB/s, peak {b.peaks['append (bulk, whole file)'] / 1024:.1f} MiB")
            self._big = Big(store, cid, size, append_s)
        return self._big

    def big_compacted(self) -> Big:
        """The big store with one real compaction in force (made once, peak memory kept)."""
        big = self.big()
        if not big.compacted:
            b = self.bench
            s = b.measure("compact", b.convo_cmd(big.store, "compact", big.cid))
            print(f"  one real `compact` on the big store (puts a compaction in force): "
                  f"{s:.2f} s")
            big.compacted = True
        if big.stored is None:
            big.stored = b.root / "big-stored.jsonl"
            b.measure("show --format jsonl",
                      b.convo_cmd(big.store, "show", big.cid, "--format", "jsonl"),
                      stdout_path=big.stored)
            big.stored_bytes = big.stored.stat().st_size
        return big


# --------------------------------------------------------------------------------------
# 1. list
# --------------------------------------------------------------------------------------


def bench_list(fx: Fixtures) -> list[Result]:
    b = fx.bench
    sc = fx.scale()
    n = sc.count
    print(f"\n== 1. list, {n:,} conversations (stdout to /dev/null) ==")
    (sc.store / ".git" / "convo" / "catalogue").unlink(missing_ok=True)
    cold = b.measure("list", b.convo_cmd(sc.store, "list"))
    warm = [b.measure("list", b.convo_cmd(sc.store, "list")) for _ in range(b.rounds)]
    w = statistics.median(warm)
    rows = [("first run after the build (no catalogue, no caches)", sc.first_list_s),
            ("catalogue deleted (per-conversation caches kept)", cold),
            (f"warm (median of {b.rounds})", w)]
    for name, s in rows:
        us = s / n * 1e6
        print(f"  {name:<54} {s:8.3f} s  {us:8.1f} us/conv   "
              f"vs goal 0.2 s: {s / 0.2:6.2f}   vs 20 us: {us / 20:6.2f}")
    print(f"  warm runs: {', '.join(f'{s * 1000:.0f}' for s in warm)} ms")
    return [
        info("list first run (no catalogue, no cache)", sc.first_list_s, "s"),
        info("list catalogue deleted", cold, "s"),
        info("list catalogue deleted, per conversation", cold / n * 1e6, "us"),
        judged("list warm", w, 0.2, "s"),
        judged("list warm, per conversation", w / n * 1e6, 20, "us"),
    ]


# --------------------------------------------------------------------------------------
# 2. name resolution
# --------------------------------------------------------------------------------------


def bench_resolve(fx: Fixtures, per_sample: int = 5) -> list[Result]:
    b = fx.bench
    sc = fx.scale()
    print(f"\n== 2. resolving a name in the {sc.count:,}-conversation store "
          f"(loops of {per_sample}, median of {b.rounds} rounds) ==")
    results = []
    names = [("title", TARGET_TITLE), ("12-char prefix", sc.target[:12])]
    for cmd in ("show", "log"):
        for kind, name in names:
            def side(n: str, cmd: str = cmd):
                line = " ".join(sh(a) for a in b.convo_cmd(sc.store, cmd, n))
                return lambda: b.loop([line] * per_sample)
            by_name, by_id = alternate(b.rounds, [side(name), side(sc.target)])
            nm, im = statistics.median(by_name), statistics.median(by_id)
            ratio = nm / im
            print(f"  {cmd} by {kind:<15} {nm:8.2f} ms   by full id {im:8.2f} ms   "
                  f"ratio {ratio:.3f} (goal <= 1.2)")
            results.append(info(f"{cmd} by {kind}", nm, "ms"))
            results.append(info(f"{cmd} by full id", im, "ms"))
            results.append(judged(f"{cmd} {kind}/full id", ratio, 1.2, "x"))
    return results


# --------------------------------------------------------------------------------------
# 3. store size
# --------------------------------------------------------------------------------------


def bench_size(fx: Fixtures) -> list[Result]:
    b = fx.bench
    sc = fx.scale()
    print(f"\n== 3. one ~{fx.target_turns}-turn conversation: {sc.count:,}-conversation "
          f"store vs a store holding only it (median of {b.rounds} rounds) ==")
    results = []
    stores = [(sc.store, sc.target), (sc.single, sc.single_target)]

    def appends(store: Path, cid: str, files: list[Path]):
        line = " ".join(sh(a) for a in b.convo_cmd(store, "append", cid))
        return [f"{line} < {sh(f)}" for f in files]

    # One set of turn files per round, used by both sides.
    turn_sets = [[fx.turn_file(f"size-{r}-{k}") for k in range(3)] for r in range(b.rounds + 1)]
    rounds_done = [0, 0]

    def append_sample(i: int):
        def sample():
            files = turn_sets[rounds_done[i]]
            rounds_done[i] += 1
            store, cid = stores[i]
            return b.loop(appends(store, cid, files))
        return sample

    big_side, one_side = alternate(b.rounds, [append_sample(0), append_sample(1)])
    ratios = [("append", statistics.median(big_side), statistics.median(one_side), 3)]

    for cmd in ("show", "log"):
        def side(i: int, cmd: str = cmd):
            store, cid = stores[i]
            line = " ".join(sh(a) for a in b.convo_cmd(store, cmd, cid))
            return lambda: b.loop([line] * 5)
        big_side, one_side = alternate(b.rounds, [side(0), side(1)])
        ratios.append((cmd, statistics.median(big_side), statistics.median(one_side), 5))

    for cmd, big_ms, one_ms, k in ratios:
        ratio = big_ms / one_ms
        print(f"  {cmd:<7} {sc.count:,} conversations {big_ms:8.2f} ms   1 conversation "
              f"{one_ms:8.2f} ms   ratio {ratio:.3f} (goal <= 1.2; loops of {k})")
        results.append(info(f"{cmd} in {sc.count:,}-conv store", big_ms, "ms"))
        results.append(info(f"{cmd} in 1-conv store", one_ms, "ms"))
        results.append(judged(f"{cmd} {sc.count:,}-conv / 1-conv store", ratio, 1.2, "x"))
    return results


# --------------------------------------------------------------------------------------
# 4. compaction
# --------------------------------------------------------------------------------------


def bench_compact(fx: Fixtures) -> list[Result]:
    b = fx.bench
    big = fx.big()
    print(f"\n== 4. compact vs append, {fx.big_turns:,}-turn conversation "
          f"({big.source_bytes / 1e6:.0f} MB; median of {b.rounds} rounds) ==")
    if big.compacted:
        print("  (a compaction is already in force in the big store)")
    counter = iter(range(1 << 30))

    def append():
        path = fx.turn_file(f"compact-{next(counter)}")
        return b.measure("append (one turn, big conversation)",
                         b.convo_cmd(big.store, "append", big.cid), stdin_path=path) * 1000

    def dry_run():
        return b.measure("compact --dry-run",
                         b.convo_cmd(big.store, "compact", big.cid, "--dry-run")) * 1000

    def compact():
        copy = b.root / "big-copy"
        shutil.rmtree(copy, ignore_errors=True)
        subprocess.run(["cp", "-a", str(big.store), str(copy)], check=True)
        # The copy's ~120 MB of dirty pages would be written back while compact runs (and
        # its removal's, while the next command runs): flushed here, untimed.
        os.sync()
        ms = b.measure("compact", b.convo_cmd(copy, "compact", big.cid)) * 1000
        shutil.rmtree(copy, ignore_errors=True)
        os.sync()
        return ms

    a, d, c = alternate(b.rounds, [append, dry_run, compact])
    am, dm, cm = (statistics.median(x) for x in (a, d, c))
    print(f"  append one ~2 KB turn      {am:9.1f} ms   (on the big store)")
    print(f"  compact --dry-run          {dm:9.1f} ms   (on the big store)   "
          f"dry-run/append {dm / am:.2f} (goal <= 5)")
    print(f"  compact (writes a commit)  {cm:9.1f} ms   (a fresh copy each round)   "
          f"compact/append {cm / am:.2f} (goal <= 5)")
    return [
        info(f"append one turn, {fx.big_turns:,}-turn conv", am, "ms"),
        info("compact --dry-run", dm, "ms"),
        info("compact", cm, "ms"),
        judged("compact --dry-run / append", dm / am, 5, "x"),
        judged("compact / append", cm / am, 5, "x"),
    ]


# --------------------------------------------------------------------------------------
# 5. memory
# --------------------------------------------------------------------------------------


def bench_memory(fx: Fixtures) -> list[Result]:
    b = fx.bench
    big = fx.big_compacted()
    print(f"\n== 5. peak memory (max RSS), {fx.big_turns:,}-turn conversation, "
          f"{big.source_bytes / 1e6:.0f} MB ==")
    b.measure("show --compacted --format jsonl",
              b.convo_cmd(big.store, "show", big.cid, "--compacted", "--format", "jsonl"))
    b.measure("export --format jsonl",
              b.convo_cmd(big.store, "export", big.cid, "--format", "jsonl"))
    results = []
    for label in ("show --format jsonl", "show --compacted --format jsonl",
                  "export --format jsonl", "append (bulk, whole file)", "compact"):
        kib = b.peaks[label]
        print(f"  {label:<34} {kib / 1024:8.1f} MiB   ({kib / MEMORY_GOAL_KIB:.2f} of 40 MiB)")
        results.append(judged(f"peak RSS {label}", kib / 1024, 40, "MiB"))
    return results


# --------------------------------------------------------------------------------------
# 6. and 7. throughput
# --------------------------------------------------------------------------------------

PY_ANCHOR = """
import json, sys
write = sys.stdout.write
with open(sys.argv[1], encoding="utf-8") as f:
    for line in f:
        write(json.dumps(json.loads(line), separators=(",", ":"), ensure_ascii=False) + "\\n")
"""


def bench_show(fx: Fixtures) -> list[Result]:
    b = fx.bench
    big = fx.big_compacted()
    print(f"\n== 6. show --format jsonl throughput vs Python json.loads+dumps per line "
          f"(median of {b.rounds} rounds) ==")
    anchor = b.root / "anchor.py"
    anchor.write_text(PY_ANCHOR)
    py_out = b.root / "anchor-out.jsonl"
    b.measure(None, [sys.executable, str(anchor), str(big.stored)], stdout_path=py_out)
    py_bytes = py_out.stat().st_size
    py_out.unlink()
    convo = lambda: b.measure("show --format jsonl",  # noqa: E731
                              b.convo_cmd(big.store, "show", big.cid, "--format", "jsonl"))
    python = lambda: b.measure(None, [sys.executable, str(anchor), str(big.stored)])  # noqa: E731
    c, p = alternate(b.rounds, [convo, python])
    cs, ps = statistics.median(c), statistics.median(p)
    c_rate, p_rate = big.stored_bytes / 1e6 / cs, py_bytes / 1e6 / ps
    print(f"  convo show --format jsonl  {cs:7.3f} s  {big.stored_bytes / 1e6:6.1f} MB out  "
          f"{c_rate:8.1f} MB/s")
    print(f"  python loads+dumps         {ps:7.3f} s  {py_bytes / 1e6:6.1f} MB out  "
          f"{p_rate:8.1f} MB/s")
    print(f"  convo/python {c_rate / p_rate:.2f} (goal >= 5)")
    return [
        info("show --format jsonl", c_rate, "MB/s"),
        info("python loads+dumps anchor", p_rate, "MB/s"),
        judged("show jsonl / python", c_rate / p_rate, 5, "x", upper=False),
    ]


def bench_compacted(fx: Fixtures) -> list[Result]:
    b = fx.bench
    big = fx.big_compacted()
    if shutil.which("jq") is None:
        print("\n== 7. skipped: jq is not on PATH ==")
        return [Result("show --compacted / jq", 0, ">= 10", False)]
    print(f"\n== 7. show --compacted --format jsonl throughput vs jq -c . "
          f"(median of {b.rounds} rounds) ==")
    cmd = b.convo_cmd(big.store, "show", big.cid, "--compacted", "--format", "jsonl")
    out = b.root / "compacted.jsonl"
    b.measure("show --compacted --format jsonl", cmd, stdout_path=out)
    out_bytes = out.stat().st_size
    out.unlink()
    convo = lambda: b.measure("show --compacted --format jsonl", cmd)  # noqa: E731
    jq = lambda: b.measure(None, ["jq", "-c", ".", str(big.stored)])  # noqa: E731
    c, j = alternate(b.rounds, [convo, jq])
    cs, js = statistics.median(c), statistics.median(j)
    mb = big.stored_bytes / 1e6
    print(f"  convo show --compacted     {cs:7.3f} s  {mb / cs:8.1f} MB/s of the "
          f"{mb:.1f} MB conversation ({out_bytes / 1e6:.1f} MB out)")
    print(f"  jq -c . (stored lines)     {js:7.3f} s  {mb / js:8.1f} MB/s")
    print(f"  convo/jq {js / cs:.2f} (goal >= 10)")
    return [
        info("show --compacted --format jsonl", mb / cs, "MB/s"),
        info("jq -c . anchor", mb / js, "MB/s"),
        judged("show --compacted / jq", js / cs, 10, "x", upper=False),
    ]


# --------------------------------------------------------------------------------------
# 8. usage
# --------------------------------------------------------------------------------------


def bench_usage(fx: Fixtures) -> list[Result]:
    b = fx.bench
    sc = fx.scale()
    n = sc.count
    print(f"\n== 8. `convo usage` in the {n:,}-conversation store, beside `convo list` "
          f"(median of {b.rounds} rounds) ==")
    by_model = b.convo_cmd(sc.store, "usage", "--by", "model")
    by_day = b.convo_cmd(sc.store, "usage", "--by", "day")
    listing = b.convo_cmd(sc.store, "list")
    b.measure(None, listing)  # the catalogue warm, as a user's is
    (sc.store / ".git" / "convo" / "usage").unlink(missing_ok=True)
    cold = b.measure("usage", by_model)
    out = b.root / "usage-by-model.txt"
    b.measure("usage", by_model, stdout_path=out)
    print("  " + "\n  ".join(out.read_text().rstrip().splitlines()))
    days = json.loads(b.convo(sc.store, "usage", "--by", "day", "--format", "json", capture=True))
    cut = b.convo_cmd(sc.store, "usage", "--by", "day", "--since",
                      f"{days['rows'][0]['key']['day']}T00:00:01Z")
    m, d, li = alternate(b.rounds, [lambda: b.measure("usage", by_model),
                                    lambda: b.measure("usage", by_day),
                                    lambda: b.measure("list", listing)])
    mm, dm, lm = (statistics.median(x) for x in (m, d, li))
    cm = statistics.median(b.measure("usage", cut) for _ in range(max(1, b.rounds // 2)))
    print(f"  first run, no tally (every conversation counted)  {cold:8.3f} s")
    for name, s in (("usage --by model", mm), ("usage --by day", dm)):
        print(f"  {name} warm  {s:8.3f} s   {s / n * 1e6:7.1f} us/conv   list {lm:.3f} s   "
              f"ratio to list {s / lm:5.2f}   vs goal 0.5 s: {s / 0.5:5.2f}")
    print(f"  usage --since inside the calls' day (every conversation read)  {cm:8.3f} s")
    return [
        info("usage first run (no tally)", cold, "s"),
        info("list warm (same rounds)", lm, "s"),
        judged("usage --by model warm", mm, 0.5, "s"),
        judged("usage --by day warm", dm, 0.5, "s"),
        info("usage --by model / list", mm / lm, "x"),
        info("usage --by day / list", dm / lm, "x"),
        info("usage --since inside a day (events read)", cm, "s"),
    ]


# --------------------------------------------------------------------------------------


def print_summary(results: list[Result]) -> None:
    print("\n== summary ==")
    width = max(len(r.metric) for r in results)
    print(f"  {'metric':<{width}}  {'value':>12}  {'target':>12}  result")
    for r in results:
        value = f"{r.value:.4g}" if r.unit == "x" else f"{r.value:.4g} {r.unit}"
        verdict = "-" if r.target == "info" else ("PASS" if r.passed else "FAIL")
        print(f"  {r.metric:<{width}}  {value:>12}  {r.target:>12}  {verdict}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary", nargs="?", type=Path, default=DEFAULT_BINARY,
                        help=f"the convo binary (default: {DEFAULT_BINARY})")
    parser.add_argument("--only", nargs="+", metavar="FIGURE",
                        choices=FIGURES + [str(i) for i in range(1, len(FIGURES) + 1)],
                        default=FIGURES,
                        help="figures to measure, by name or number: "
                             + ", ".join(f"{i} {n}" for i, n in enumerate(FIGURES, 1)))
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds per median")
    parser.add_argument("--conversations", type=int, default=10_000,
                        help="conversations in the big store (default 10,000)")
    parser.add_argument("--target-turns", type=int, default=100,
                        help="turns of the measured conversation there (default 100)")
    parser.add_argument("--big-turns", type=int, default=5000,
                        help="turns of the big conversation (default 5,000, ~56 MB)")
    parser.add_argument("--seed", type=int, default=14, help="content seed")
    parser.add_argument("--tmp", type=Path, default=Path("/tmp"),
                        help="where to create the temporary directory (default: /tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()
    only = {FIGURES[int(x) - 1] if x.isdigit() else x for x in args.only}

    convo_bin = args.binary.resolve()
    if not os.access(convo_bin, os.X_OK):
        sys.exit(f"{convo_bin} is not an executable; build it with `cargo build --release`")
    for tool in ("git", "sh", "cp"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not on PATH")
    if not GENERATOR.exists():
        sys.exit(f"{GENERATOR} is missing")

    sys.stdout.reconfigure(line_buffering=True)
    bench = Bench.create(convo_bin, args.rounds, args.seed, args.tmp)
    fx = Fixtures(bench, args.conversations, args.target_turns, args.big_turns)
    version = bench.run("git", "--version", capture=True).stdout.decode().strip()
    built = datetime.fromtimestamp(convo_bin.stat().st_mtime).isoformat(timespec="seconds")
    print(f"convo: {convo_bin} (built {built})\n{version}; temporary root {bench.root}; "
          f"seed {args.seed}; {os.cpu_count()} CPUs")
    started = time.perf_counter()
    results: list[Result] = []
    try:
        for name, fn in (("list", bench_list), ("resolve", bench_resolve),
                         ("size", bench_size), ("compact", bench_compact),
                         ("memory", bench_memory), ("show", bench_show),
                         ("compacted", bench_compacted), ("usage", bench_usage)):
            if name in only:
                results += fn(fx)
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
