#!/usr/bin/env python3
"""`convo watch` benchmark: the time from a session file growing to its commit in the store.

How to run (from the repository root)::

    cargo build --release && python3 benches/watch.py

    python3 benches/watch.py path/to/convo          # another binary
    python3 benches/watch.py --growths 20           # more samples per quiet period
    python3 benches/watch.py --quiet-ms 500         # other quiet periods (default: 1000 200)
    python3 benches/watch.py --keep                 # leave the temporary directory behind

The script builds nothing: it drives an existing `convo` binary (default
`target/release/convo`) as a user would (`convo watch` as a long-running process, `convo
import`, `convo list`), and prints raw numbers, ratios against the goal, and a PASS/FAIL
summary table.  Python 3.11, stdlib only; the helpers (Bench, Result, judged, info,
print_summary) are scale.py's.  The exit status is 0 when every goal is met, 1 otherwise.
A run takes about 20 s (most of it is the quiet periods themselves).  Linux: the
watcher's readiness is read from /proc (its inotify watches); elsewhere the script waits 1 s.

Everything happens in a fresh directory under /tmp (removed at the end unless --keep) with
HOME pointing into it, GIT_CONFIG_NOSYSTEM=1, and a fixed git identity, so neither the
user's git configuration nor their convo store (nor their ~/.claude) is touched.

Session
-------
A real Claude Code transcript, the first .jsonl of ../shared/corpus/claude-code/ (53
lines, 125 KB, with two subagents; --session names another), grown line by line at
HOME/.claude/projects/-path-to-Demo/<sessionId>.jsonl, as Claude Code writes it
(gen-conversation.py writes convo's own events, not Claude Code's format, so it is not
used).  The first chunk is all but the last L lines, where L = the sum of the growths:
growth i appends 1 + i % 3 whole lines (1, 2, 3, 1, ...), or one line each if the file is
too short for that.  Each write is one os.write of whole lines followed by os.fsync.

Measurement
-----------
For each quiet period Q (--quiet-ms; 1000, the default of `convo watch`, and 200): a new
store (`convo init`) and an empty projects folder, then `convo --store S watch
HOME/.claude/projects --quiet-ms Q --poll P` (P = --poll, 10 s, watch's default: changes
are seen through inotify; the scan every P s only catches what inotify missed) as a
subprocess, stdout and stderr to files.  Once the watcher holds its inotify watches, the
first chunk is written and its import awaited (its latency is printed, for information:
a new conversation), then --growths (10) growths, each awaited, each after a pause of
0.2-0.5 s (seeded).

Latency of a growth: from just before its os.write to the moment the store holds its
events.  The probe reads the store's branch ref (.git/HEAD names it, `main`; the ref file,
else .git/packed-refs) every 2 ms.  One growth can land as several commits (`watch`
commits once per conversation it changes: the session and each subagent), so on each
change of the ref the commits since the previous value are read (loose objects, zlib, in
process; `git log` if packed) and their subjects' "(+N events)" summed; the growth has
landed when the sum reaches what a one-shot `convo import` of the file cut at the same two
lines says it adds (the difference of the events of the two cuts, every cut imported once
into a scratch store before the run).  The commits per growth and the spread from the
first to the last are printed.  A growth that has not landed after Q + P + 10 s counts as
missed (FAIL).

Then SIGINT: the watcher must exit 0 (it imports what it saw, then exits).  Checks: the
watched store must hold every line's events: `convo list --format json` of it against a
one-shot `convo import` of the whole session file (same path, so the same titles) into a
second store: per conversation (title, events, turns) equal, and the totals printed.  The
watcher's CPU time over its whole run (os.wait4) is printed, for information.

Anchor and goal: the quiet period is the floor of the latency by design (a file is imported
once it has been unchanged for Q), so latency / Q is printed, and the goal is the overhead
above it: median latency <= Q + 250 ms, for each Q.  Run at 1000 and 200 ms, the overhead
(median latency - Q) should be about the same.  It is not the watcher's 100 ms loop: the
loop waits for a file system event for up to 100 ms, and the wait starts again at every
event, so its wake-ups fall in step with the growth's last event, and the first one at or
after Q finds the file due (for a Q that is not a multiple of 100 ms, up to 100 ms later).  What is left is the import and its commit(s), and the probe's
2 ms (about 5 ms in all on 2 cores when this was written, at both periods).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
import zlib
from datetime import datetime
from pathlib import Path

BENCHES = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHES))

from scale import DEFAULT_BINARY, Bench, Result, info, judged, print_summary, progress  # noqa: E402

CORPUS = BENCHES.parents[1] / "shared" / "corpus" / "claude-code"
OVERHEAD_GOAL_MS = 250
PROBE_S = 0.002
PROJECT = "-path-to-Demo"
EVENTS_RE = re.compile(rb"\(\+(\d+) events?\)")


# --------------------------------------------------------------------------------------
# Setup
# --------------------------------------------------------------------------------------


def sealed_bench(convo_bin: Path, seed: int, parent: Path) -> Bench:
    """scale.py's Bench (sealed HOME, git identity), in a directory named for this script."""
    b = Bench.create(convo_bin, 1, seed, parent)
    old = b.root
    new = old.with_name(old.name.replace("convo-scale-", "convo-watch-", 1))
    os.rename(old, new)
    b.root = new
    b.env = {k: v.replace(str(old), str(new)) for k, v in b.env.items()}
    return b


def session_id(lines: list[bytes], fallback: str) -> str:
    for line in lines:
        sid = json.loads(line).get("sessionId")
        if isinstance(sid, str) and sid:
            return sid
    return fallback


def growth_sizes(total: int, growths: int) -> list[int]:
    sizes = [1 + i % 3 for i in range(growths)]
    if sum(sizes) >= total:
        sizes = [1] * growths
    if sum(sizes) >= total:
        sys.exit(f"the session has {total} lines: too few for a first chunk and {growths} "
                 "growths; use fewer --growths or a longer --session")
    return sizes


def listing(b: Bench, store: Path) -> list[dict]:
    return json.loads(b.convo(store, "list", "--format", "json", capture=True))


def cut_events(b: Bench, lines: list[bytes], cuts: list[int], sid: str) -> dict[int, int]:
    """Events a one-shot `convo import` of the first k lines stores, for each cut k (every
    cut its own file, imported once into one scratch store)."""
    store = b.new_store("cuts")
    folder = b.root / "cuts-src"
    folder.mkdir()
    names = {}
    for k in cuts:
        path = folder / f"cut{k:06d}-{sid}.jsonl"
        path.write_bytes(b"".join(lines[:k]))
        b.convo(store, "import", str(path))
        names[path.name] = k
    events = {k: 0 for k in cuts}
    for conv in listing(b, store):
        events[names[conv["title"].split(": ")[0]]] += conv["events"]
    return events


# --------------------------------------------------------------------------------------
# The probe
# --------------------------------------------------------------------------------------


class Head:
    """The store's branch tip, read from the ref files (no process)."""

    def __init__(self, store: Path):
        self.git = store / ".git"
        head = (self.git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            sys.exit(f"{self.git / 'HEAD'}: not a symbolic ref: {head!r}")
        self.ref = head[5:]
        self.branch = self.ref.removeprefix("refs/heads/")
        self.loose = self.git / self.ref
        self.packed = self.git / "packed-refs"

    def read(self) -> str | None:
        try:
            return self.loose.read_text().strip()
        except FileNotFoundError:
            pass
        try:
            for line in self.packed.read_text().splitlines():
                if line.endswith(" " + self.ref):
                    return line.split(" ", 1)[0]
        except FileNotFoundError:
            pass
        return None


def commit_subjects(b: Bench, store: Path, old: str | None, new: str) -> list[bytes]:
    """Subjects of the commits from `new` back to (not including) `old`, newest first."""
    subjects = []
    sha = new
    objects = store / ".git" / "objects"
    while sha and sha != old:
        try:
            raw = zlib.decompress((objects / sha[:2] / sha[2:]).read_bytes())
        except FileNotFoundError:  # packed: ask git
            span = f"{old}..{new}" if old else new
            out = b.run("git", "-C", store, "log", "--format=%s", span, capture=True).stdout
            return out.splitlines()
        header, _, message = raw.partition(b"\0")[2].partition(b"\n\n")
        subjects.append(message.split(b"\n", 1)[0])
        parents = [line[7:].decode() for line in header.split(b"\n")
                   if line.startswith(b"parent ")]
        sha = parents[0] if parents else None
    return subjects


def events_in(subjects: list[bytes]) -> int:
    return sum(int(m.group(1)) for s in subjects for m in [EVENTS_RE.search(s)] if m)


class Landing:
    def __init__(self, latency: float | None, commits: int, spread: float, events: int):
        self.latency = latency  # seconds, None if missed
        self.commits = commits
        self.spread = spread  # seconds from the first commit seen to the last
        self.events = events


def await_landing(b: Bench, store: Path, head: Head, base: str | None, t0: float,
                  expected: int, timeout: float) -> Landing:
    """Poll the ref every PROBE_S until the commits since `base` bring `expected` events."""
    last = base
    first_seen = None
    commits = events = 0
    deadline = t0 + timeout
    while True:
        now = time.perf_counter()
        tip = head.read()
        if tip != last and tip is not None:
            if first_seen is None:
                first_seen = now
            subjects = commit_subjects(b, store, base, tip)
            commits, events = len(subjects), events_in(subjects)
            last = tip
            if events >= expected:
                return Landing(now - t0, commits, now - first_seen, events)
        if now > deadline:
            return Landing(None, commits, (now - first_seen) if first_seen else 0.0, events)
        time.sleep(PROBE_S)


# --------------------------------------------------------------------------------------
# The watcher
# --------------------------------------------------------------------------------------


def inotify_watches(pid: int) -> int | None:
    """inotify watches the process holds (None where /proc cannot tell)."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    count = 0
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                count += sum(1 for line in f if line.startswith("inotify wd:"))
        except OSError:
            continue
    return count


def await_ready(proc: subprocess.Popen, folders: int) -> str:
    deadline = time.perf_counter() + 10
    while time.perf_counter() < deadline:
        if proc.poll() is not None:
            return f"exited ({proc.returncode})"
        n = inotify_watches(proc.pid)
        if n is None:
            time.sleep(1)
            return "no /proc: waited 1 s"
        if n >= folders:
            time.sleep(0.05)
            return f"{n} inotify watches"
        time.sleep(0.01)
    return "no inotify watches after 10 s (scanning only?)"


def write_lines(path: Path, chunk: bytes) -> float:
    """Append whole lines in one write, fsync; the time just before the write."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        t0 = time.perf_counter()
        os.write(fd, chunk)
        os.fsync(fd)
    finally:
        os.close(fd)
    return t0


def stats_ms(xs: list[float]) -> tuple[float, float, float]:
    return statistics.median(xs) * 1000, min(xs) * 1000, max(xs) * 1000


def bench_quiet(b: Bench, lines: list[bytes], sid: str, sizes: list[int],
                cuts: dict[int, int], quiet_ms: int, poll: int,
                rng: random.Random) -> tuple[list[Result], float | None]:
    q = f"q={quiet_ms}"
    print(f"\n== convo watch --quiet-ms {quiet_ms} --poll {poll}: {len(sizes)} growths "
          f"({', '.join(map(str, sizes))} lines) after a first chunk of "
          f"{len(lines) - sum(sizes)} lines ==")
    store = b.new_store(f"store-q{quiet_ms}")
    projects = Path(b.env["HOME"]) / ".claude" / "projects"
    shutil.rmtree(projects, ignore_errors=True)
    (projects / PROJECT).mkdir(parents=True)
    session = projects / PROJECT / f"{sid}.jsonl"
    head = Head(store)
    timeout = quiet_ms / 1000 + poll + 10

    out_path = b.root / f"watch-q{quiet_ms}.out"
    err_path = b.root / f"watch-q{quiet_ms}.err"
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(
            b.convo_cmd(store, "watch", str(projects), "--quiet-ms", str(quiet_ms),
                        "--poll", str(poll)),
            stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=b.env)
    landings: list[Landing] = []
    missed = mismatched = 0
    try:
        ready = await_ready(proc, 2)
        first = len(lines) - sum(sizes)
        base = head.read()
        t0 = write_lines(session, b"".join(lines[:first]))
        start = await_landing(b, store, head, base, t0, cuts[first], timeout)
        if start.latency is None:
            print(f"  first chunk: not imported after {timeout:.0f} s: FAIL")
        else:
            print(f"  watcher ready ({ready}); first chunk ({first} lines, a new "
                  f"conversation): {start.latency * 1000:.0f} ms, {start.commits} commit(s), "
                  f"{start.events} events")
        at = first
        for i, n in enumerate(sizes):
            time.sleep(rng.uniform(0.2, 0.5))
            expected = cuts[at + n] - cuts[at]
            base = head.read()
            t0 = write_lines(session, b"".join(lines[at:at + n]))
            land = await_landing(b, store, head, base, t0, expected, timeout)
            at += n
            landings.append(land)
            if land.latency is None:
                missed += 1
                print(f"  growth {i + 1:2}: +{n} lines: {land.events} of {expected} events "
                      f"after {timeout:.0f} s: MISSED")
                continue
            if land.events != expected:
                mismatched += 1
            print(f"  growth {i + 1:2}: +{n} line(s) {land.latency * 1000:7.1f} ms  "
                  f"({land.commits} commit(s), spread {land.spread * 1000:.1f} ms, "
                  f"+{land.events} events, expected +{expected})")
        time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except ChildProcessError:
            status, usage = 0, None
        proc.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if proc.returncode is None:
            proc.kill()
            proc.wait()

    rc = proc.returncode
    cpu = (usage.ru_utime + usage.ru_stime) if usage else float("nan")
    err_text = err_path.read_text(errors="replace")
    notes = [line for line in err_text.splitlines()
             if "warning" in line.lower() or "error" in line.lower()]
    print(f"  SIGINT: exit status {rc}; watcher CPU time {cpu:.2f} s; stdout "
          f"{out_path.stat().st_size} B, stderr {len(err_text.splitlines())} lines"
          + "".join(f"\n    stderr: {line}" for line in notes[:5]))

    # The watched store against a one-shot import of the whole file.
    oneshot = b.new_store(f"oneshot-q{quiet_ms}")
    b.convo(oneshot, "import", str(session))
    key = lambda c: (c["title"], c["events"], c["turns"])  # noqa: E731
    watched = sorted(map(key, listing(b, store)))
    anchor = sorted(map(key, listing(b, oneshot)))
    w_total, a_total = sum(c[1] for c in watched), sum(c[1] for c in anchor)
    same = watched == anchor
    print(f"  store: {len(watched)} conversations, {w_total} events; one-shot import: "
          f"{len(anchor)} conversations, {a_total} events; per conversation (title, events, "
          f"turns): {'equal' if same else 'DIFFERENT'}")
    if not same:
        print(f"    watched:  {watched}\n    one-shot: {anchor}")

    results = [
        Result(f"{q}: watcher exit status after SIGINT", rc, "= 0", rc == 0),
        Result(f"{q}: events stored (one-shot import: {a_total})", w_total, f"= {a_total}",
               same, "events"),
        Result(f"{q}: growths missed or miscounted", missed + mismatched, "= 0",
               missed + mismatched == 0, "growths"),
    ]
    lat = [x.latency for x in landings if x.latency is not None]
    if start.latency is not None:
        results.append(info(f"{q}: first chunk latency (new conversation)",
                            start.latency * 1000, "ms"))
    if not lat:
        results.append(Result(f"{q}: median latency", float("nan"),
                              f"<= {quiet_ms + OVERHEAD_GOAL_MS} ms", False, "ms"))
        return results, None
    med, lo, hi = stats_ms(lat)
    over = med - quiet_ms
    commits = [x.commits for x in landings if x.latency is not None]
    print(f"  latency: median {med:.1f} ms, min {lo:.1f}, max {hi:.1f} over {len(lat)} "
          f"growths; latency/quiet {med / quiet_ms:.3f} (median), {hi / quiet_ms:.3f} (max)")
    print(f"  overhead above the quiet period: median {over:.1f} ms, min {lo - quiet_ms:.1f}, "
          f"max {hi - quiet_ms:.1f} (goal <= {OVERHEAD_GOAL_MS} ms); commits per growth "
          f"{min(commits)}-{max(commits)}")
    results += [
        judged(f"{q}: median latency", med, quiet_ms + OVERHEAD_GOAL_MS, "ms"),
        info(f"{q}: median overhead (latency - quiet)", over, "ms"),
        info(f"{q}: min latency", lo, "ms"),
        info(f"{q}: max latency", hi, "ms"),
        info(f"{q}: median latency / quiet", med / quiet_ms, "x"),
        info(f"{q}: watcher CPU time", cpu, "s"),
    ]
    return results, over


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary", nargs="?", type=Path, default=DEFAULT_BINARY,
                        help=f"the convo binary (default: {DEFAULT_BINARY})")
    parser.add_argument("--growths", type=int, default=10,
                        help="timed growths per quiet period (default 10)")
    parser.add_argument("--quiet-ms", type=int, nargs="+", default=[1000, 200],
                        help="quiet periods to run, in ms (default: 1000 200)")
    parser.add_argument("--poll", type=int, default=10,
                        help="convo watch --poll, in seconds (default 10, watch's own)")
    parser.add_argument("--session", type=Path, default=None,
                        help=f"a Claude Code JSONL transcript (default: the first .jsonl of "
                             f"{CORPUS})")
    parser.add_argument("--seed", type=int, default=3, help="seed of the pauses")
    parser.add_argument("--tmp", type=Path, default=Path("/tmp"),
                        help="where to create the temporary directory (default: /tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()
    if args.growths < 1 or args.poll < 1 or any(q < 1 for q in args.quiet_ms):
        sys.exit("--growths, --poll and --quiet-ms must be positive")

    convo_bin = args.binary.resolve()
    if not os.access(convo_bin, os.X_OK):
        sys.exit(f"{convo_bin} is not an executable; build it with `cargo build --release`")
    if shutil.which("git") is None:
        sys.exit("git is not on PATH")
    session_src = args.session
    if session_src is None:
        found = sorted(CORPUS.glob("*.jsonl"))
        if not found:
            sys.exit(f"no .jsonl under {CORPUS}; name a transcript with --session")
        session_src = found[0]
    lines = session_src.read_bytes().splitlines(keepends=True)
    if lines and not lines[-1].endswith(b"\n"):
        lines[-1] += b"\n"
    sid = session_id(lines, session_src.stem)
    sizes = growth_sizes(len(lines), args.growths)

    sys.stdout.reconfigure(line_buffering=True)
    bench = sealed_bench(convo_bin, args.seed, args.tmp)
    version = bench.run("git", "--version", capture=True).stdout.decode().strip()
    built = datetime.fromtimestamp(convo_bin.stat().st_mtime).isoformat(timespec="seconds")
    print(f"convo: {convo_bin} (built {built})\n{version}; temporary root {bench.root}; "
          f"seed {args.seed}; {os.cpu_count()} CPUs")
    print(f"session: {session_src} ({len(lines)} lines, {session_src.stat().st_size / 1e3:.0f} "
          f"KB), grown as ~/.claude/projects/{PROJECT}/{sid}.jsonl")
    started = time.perf_counter()
    results: list[Result] = []
    overheads = {}
    try:
        first = len(lines) - sum(sizes)
        marks = [first]
        for n in sizes:
            marks.append(marks[-1] + n)
        progress(f"one-shot imports of the {len(marks)} cuts")
        cuts = cut_events(bench, lines, marks, sid)
        print(f"one-shot import of the cuts (lines: events): "
              + ", ".join(f"{k}: {cuts[k]}" for k in marks))
        head = Head(bench.root / "cuts")
        print(f"store branch: {head.branch} (probe: {head.ref} or packed-refs, every "
              f"{PROBE_S * 1000:g} ms)")
        rng = random.Random(args.seed)
        for quiet_ms in args.quiet_ms:
            progress(f"--quiet-ms {quiet_ms}")
            res, over = bench_quiet(bench, lines, sid, sizes, cuts, quiet_ms, args.poll, rng)
            results += res
            if over is not None:
                overheads[quiet_ms] = over
    finally:
        if args.keep:
            print(f"\nkept {bench.root}")
        else:
            shutil.rmtree(bench.root, ignore_errors=True)
    if len(overheads) > 1:
        print("\nmedian overhead above the quiet period: "
              + ", ".join(f"{over:.1f} ms at {q} ms" for q, over in overheads.items()))
    print_summary(results)
    print(f"\ntotal time {time.perf_counter() - started:.0f} s")
    return 0 if all(r.passed for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
