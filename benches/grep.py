#!/usr/bin/env python3
"""`convo grep` benchmark: 10,000 conversations (~500 MB of JSONL) against `rg -c`.

How to run (from the repository root)::

    cargo build --release && python3 benches/grep.py

    python3 benches/grep.py path/to/convo           # another binary
    python3 benches/grep.py --conversations 1000    # a quick run (~50 MB)
    python3 benches/grep.py --keep                  # leave the temporary store behind

The script builds nothing: it drives an existing `convo` binary (default
`target/release/convo`), `git` and ripgrep as separate processes, exactly as a user would,
and prints raw numbers, ratios against the goal, and a PASS/FAIL summary table.  Python
3.11, stdlib only; the helpers (Bench, ulid, generate, alternate, judged, info,
print_summary) are scale.py's.  The exit status is 0 when every goal is met, 1 otherwise.
A full run takes about 2 minutes on 2 cores (the store takes ~40 s to build).

Anchor: ripgrep, `rg` from PATH, else /tmp/rg/bin/rg; without either the script stops and
says to `cargo install ripgrep`.  rg runs with its defaults (one thread per CPU).

Everything happens in a fresh directory under /tmp (removed at the end unless --keep) with
HOME pointing into it, GIT_CONFIG_NOSYSTEM=1, and a fixed git identity, so neither the
user's git configuration nor their convo store is touched.

Store
-----
`convo init`, then --templates (40) template conversations, each made by convo in a
scratch store (`convo new` + ONE bulk `convo append` of ../shared/tools/gen-conversation.py
--turns 5 with its own seed: user, reasoning, tool calls with code and diffs, results,
assistant; ~56 KB of stored JSONL each, in 5 segment files), so the stored bytes are
convo's own.  Then --conversations (10,000) conversations in ONE `git fast-import` commit
on top of HEAD, the way scale.py builds its 10k store: conversation i is template i % K
(its segment blobs as they are), with its own canonical ULID id and a meta.json with its
own title and created time.  Then `git reset -q --hard`, and `convo list | wc -l` must
equal N.  The total size of every file under conversations/*/events/ (the stored JSONL)
is printed: ~557 MB in 42,000 files by default (--turns 4 would give ~440 MB).

Note what this store is and is not.  fast-import writes one pack, so git's objects are
packed (zlib), and the 10,000 conversations share K x 5 segment blobs (~3 MB packed):
convo reads its events from git objects, so its reads come from a small, hot pack, where
a real store's 500 MB would be 500 MB of distinct blobs.  rg reads the working tree's
event files (the same bytes), from the page cache.  fast-import runs with --depth=0
(--delta-depth): every blob is stored whole, as `git repack -adf` stores these segments
too (git's own delta search finds none worth making).  fast-import's default (--depth=50)
instead stores each blob as a delta of the one written before it, chains up to 50 deep
that convo then inflates link by link; `--delta-depth 50` measures that case.  Every
conversation holds one commit's worth of history; what scales is the number of
conversations and their bytes.

Measurements
------------
For each pattern: `convo --store S --no-pager --color never grep -c PATTERN` (every
conversation) against `rg -c PATTERN S/conversations` (the raw JSON lines of the event
files, one count per file).  Both print a count per file or conversation with a match;
convo searches each event's decoded text, rg the JSON that stores it, so the counts differ
(rg counts JSON lines, convo lines of decoded text), but the work is the same scan of the
same bytes.  Patterns:

* `error`: a common literal (in most conversations, many lines each);
* a rare literal: a phrase of four words that occurs in the decoded text of exactly one
  template, in no other template's bytes (so in N / K conversations); chosen from the
  templates, printed;
* `fn [a-z_]+\\(`: a regular expression (not a literal, so convo cannot skip lines by
  their bytes).

Each pattern is first run once on each side with its output kept, as a sanity check: convo
must find matches, and the conversations with a match are counted on both sides (rg's by
the conversation directory of each file).  The first convo run after the build is also
the first grep of the store (no outline index yet: every conversation is outlined and its
records written), and its wall time is printed as "cold", for information.  Then the
sides alternate round by round (convo, rg, rg -j1; then the reverse order, ...), a first
warm-up round is dropped, and the median of --rounds rounds (5) is reported, with MB/s
over the stored JSONL bytes.  `rg -j1` (one thread, as `convo grep` runs) is printed for
information; the goal is against rg's default.  rg's time is mostly system time (opening
and reading 42,000 files) and varies by ~30% from run to run, so the ratios do too.  Every
command writes stdout to /dev/null.  Peak memory is convo's maximum resident set size as
os.wait4 reports it (the largest over the timed runs; the cold run's apart), for
information.  A child's ru_maxrss starts at the RSS of the process it was forked from (with
vfork, Python's default, at Python's own *peak* RSS), so children are forked here
(subprocess._USE_VFORK = False), after glibc's malloc_trim, and the floor this leaves
(~12 MiB: `true` measured the same way before each pattern) is printed beside each peak.

Goal (issue: "on 10,000 conversations / 500 MB, within 3x of `rg -c` over the same event
files"): convo/rg wall time <= 3 for each pattern.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

BENCHES = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHES))

from scale import (  # noqa: E402
    CROCKFORD, DEFAULT_BINARY, GENERATOR, Bench, Result, alternate, generate, info, judged,
    print_summary, progress, ulid,
)

RG_FALLBACK = Path("/tmp/rg/bin/rg")
COMMON = "error"
REGEX = r"fn [a-z_]+\("
RATIO_GOAL = 3.0


# --------------------------------------------------------------------------------------
# Setup
# --------------------------------------------------------------------------------------


def find_rg() -> Path:
    found = shutil.which("rg")
    if found:
        return Path(found).resolve()
    if os.access(RG_FALLBACK, os.X_OK):
        return RG_FALLBACK
    sys.exit(f"ripgrep (rg) is neither on PATH nor at {RG_FALLBACK}; it is this benchmark's "
             "anchor: install it with `cargo install ripgrep`")


def sealed_bench(convo_bin: Path, rounds: int, seed: int, parent: Path) -> Bench:
    """scale.py's Bench (sealed HOME, git identity), in a directory named for this script."""
    b = Bench.create(convo_bin, rounds, seed, parent)
    old = b.root
    new = old.with_name(old.name.replace("convo-scale-", "convo-grep-", 1))
    os.rename(old, new)
    b.root = new
    b.env = {k: v.replace(str(old), str(new)) for k, v in b.env.items()}
    return b


def searched_texts(event: dict) -> list[str]:
    """What convo searches an input event by: its content, a call's argument values."""
    out = []
    if isinstance(event.get("content"), str):
        out.append(event["content"])

    def leaves(v):
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, list):
            for x in v:
                leaves(x)
        elif isinstance(v, dict):
            for x in v.values():
                leaves(x)

    if event.get("type") == "tool_call":
        leaves(event.get("arguments"))
    return out


def rare_phrase(sources: list[Path]) -> tuple[str, int]:
    """Four lower-case words, in a row in one template's text and in no other template's
    bytes (the first such phrase of the lowest template that has one); its template."""
    raws = [p.read_text() for p in sources]
    for k, raw in enumerate(raws):
        seen = Counter()
        for line in raw.splitlines():
            for text in searched_texts(json.loads(line)):
                words = text.split(" ")
                for i in range(len(words) - 3):
                    w = words[i:i + 4]
                    if all(x.isascii() and x.isalpha() and x.islower() for x in w):
                        seen[" ".join(w)] += 1
        for phrase in sorted(seen):
            if raw.count(phrase) == seen[phrase] and not any(
                    phrase in other for j, other in enumerate(raws) if j != k):
                return phrase, k
    sys.exit("no phrase of four words occurs in one template only; use more --turns")


def event_bytes(store: Path) -> tuple[int, int]:
    """Total size and number of the files under conversations/*/events/."""
    total = files = 0
    # conversations/<fan>/<id>/events: the fan folders, then the conversations in each.
    fans = [e.path for e in os.scandir(store / "conversations") if e.is_dir()]
    stack = [os.path.join(e.path, "events") for f in fans for e in os.scandir(f) if e.is_dir()]
    while stack:
        path = stack.pop()
        try:
            entries = list(os.scandir(path))
        except FileNotFoundError:
            continue
        for e in entries:
            if e.is_dir(follow_symlinks=False):
                stack.append(e.path)
            elif e.is_file(follow_symlinks=False):
                total += e.stat(follow_symlinks=False).st_size
                files += 1
    return total, files


class Store:
    def __init__(self, path: Path, count: int, jsonl_bytes: int, files: int, rare: str,
                 rare_template: int, templates: int):
        self.path = path
        self.count = count
        self.jsonl_bytes = jsonl_bytes
        self.files = files
        self.rare = rare
        self.rare_template = rare_template
        self.templates = templates


def build(b: Bench, n: int, k: int, turns: int, delta_depth: int) -> Store:
    print(f"\n-- building the {n:,}-conversation store ({k} templates of {turns} turns) --")
    start = time.perf_counter()

    # K template conversations, each made by convo: `convo new` + one bulk `convo append`.
    scratch = b.new_store("templates")
    sources = []
    templates = []  # per template: {relative path: bytes} of its segments, and its meta.json
    input_bytes = 0
    for t in range(k):
        source = b.root / "sources" / f"template-{t:03d}.jsonl"
        source.parent.mkdir(exist_ok=True)
        input_bytes += generate(turns, b.seed + t, source)
        sources.append(source)
        tid = b.new_conversation(scratch, f"template {t}")
        b.convo(scratch, "append", tid, stdin=source.read_bytes())
        tdir = scratch / "conversations" / tid[-2:] / tid
        files = {p.relative_to(tdir).as_posix(): p.read_bytes()
                 for p in sorted(tdir.rglob("*")) if p.is_file() and p.name != "meta.json"}
        if not files:
            sys.exit(f"template {t}: convo stored no event files under {tdir}")
        meta_text = (tdir / "meta.json").read_text()
        templates.append((files, meta_text))
    template_s = time.perf_counter() - start
    stored = [sum(len(d) for d in files.values()) for files, _ in templates]
    print(f"  {k} templates: {input_bytes / k / 1e3:.1f} KB of input JSONL each on average, "
          f"{sum(stored) / k / 1e3:.1f} KB stored ({min(stored) / 1e3:.1f}-"
          f"{max(stored) / 1e3:.1f} KB, {len(templates[0][0])} segment files in the first), "
          f"made in {template_s:.1f} s")
    rare, rare_template = rare_phrase(sources)

    # N conversations in one fast-import commit on top of HEAD (if `init` made one).
    store = b.new_store("store")
    branch = b.git(store, "symbolic-ref", "HEAD", capture=True).strip()
    head = b.run("git", "-C", store, "rev-parse", "--verify", "-q", "HEAD", capture=True,
                 check=False).stdout.decode().strip()
    chunks: list[bytes] = []
    marks: list[dict[str, int]] = []
    mark = 0
    for files, _ in templates:
        m = {}
        for rel, data in files.items():
            mark += 1
            m[rel] = mark
            chunks.append(b"blob\nmark :%d\ndata %d\n" % (mark, len(data)) + data + b"\n")
        marks.append(m)
    message = f"bench: {n:,} conversations from {k} templates (git fast-import)\n".encode()
    chunks.append(b"commit %s\ncommitter Bench <bench@example.com> %d +0000\n"
                  % (branch.encode(), int(time.time())))
    chunks.append(b"data %d\n" % len(message) + message)
    if head:
        chunks.append(b"from %s\n" % head.encode())
    rng = random.Random(b.seed)
    base = datetime(2025, 1, 1, tzinfo=timezone.utc)
    ids = set()
    for i in range(n):
        files, meta_text = templates[i % k]
        created = base + timedelta(minutes=i)
        cid = ulid(int(created.timestamp() * 1000), rng)
        assert cid not in ids and all(c in CROCKFORD for c in cid)
        ids.add(cid)
        meta = dict(json.loads(meta_text), title=f"conversation {i:05d}",
                    created=created.isoformat(timespec="milliseconds").replace("+00:00", "Z"))
        trailing = "\n" if meta_text.endswith("\n") else ""
        mdata = (json.dumps(meta, indent=2, ensure_ascii=False) + trailing).encode()
        prefix = f"conversations/{cid[-2:]}/{cid}/".encode()
        chunks.append(b"M 100644 inline %smeta.json\ndata %d\n" % (prefix, len(mdata))
                      + mdata + b"\n")
        for rel in files:
            chunks.append(b"M 100644 :%d %s%s\n" % (marks[i % k][rel], prefix, rel.encode()))
    chunks.append(b"\n")
    t0 = time.perf_counter()
    b.run("git", "-C", store, "fast-import", "--quiet", f"--depth={delta_depth}",
          stdin=b"".join(chunks))
    import_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    b.git(store, "reset", "-q", "--hard")
    reset_s = time.perf_counter() - t0

    listing = b.convo(store, "list", capture=True)
    count = len(listing.splitlines())
    if count != n:
        sys.exit(f"`convo list` printed {count} lines, expected {n}")
    jsonl_bytes, files = event_bytes(store)
    pack = sum(p.stat().st_size for p in (store / ".git" / "objects" / "pack").glob("*.pack"))
    objects = b.git(store, "cat-file", "--batch-all-objects", "--batch-check=%(deltabase)",
                    capture=True).split()
    deltas = sum(1 for o in objects if o.strip("0"))
    print(f"  {n:,} conversations added in one commit: fast-import {import_s:.2f} s "
          f"(--depth={delta_depth}); reset --hard {reset_s:.2f} s; check: `convo list | wc -l` "
          f"= {count:,}")
    print(f"  stored JSONL: {jsonl_bytes / 1e6:.1f} MB in {files:,} event files "
          f"({jsonl_bytes / n / 1e3:.1f} KB per conversation); git pack {pack / 1e6:.1f} MB, "
          f"{deltas:,} of {len(objects):,} objects stored as deltas")
    print(f"  built in {time.perf_counter() - start:.1f} s")
    return Store(store, count, jsonl_bytes, files, rare, rare_template, k)


# --------------------------------------------------------------------------------------
# Measurement
# --------------------------------------------------------------------------------------


def rss_floor(b: Bench) -> float:
    """MiB: what os.wait4 reports for `true` spawned as the measured commands are (the RSS
    of this Python process, which a forked child starts with), after giving freed memory
    back to the system (glibc's malloc_trim) to keep it low."""
    gc.collect()
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass
    b.measure("true", ["true"])
    return b.peaks.pop("true") / 1024


def convo_counts(path: Path) -> tuple[int, int]:
    """Conversations and total count in `convo grep -c` output (ID<TAB>N lines)."""
    convs = total = 0
    for line in path.read_text().splitlines():
        cid, _, n = line.partition("\t")
        if len(cid) != 26 or not n.isdigit():
            sys.exit(f"unexpected `convo grep -c` line: {line!r}")
        convs += 1
        total += int(n)
    return convs, total


def rg_counts(path: Path) -> tuple[int, int]:
    """Conversations (directories under conversations/) and total count in `rg -c` output."""
    convs, total = set(), 0
    for line in path.read_text().splitlines():
        file, _, n = line.rpartition(":")
        parts = Path(file).parts
        convs.add(parts[parts.index("conversations") + 2])
        total += int(n)
    return len(convs), total


def bench_pattern(b: Bench, st: Store, rg: Path, name: str, pattern: str,
                  first: bool) -> list[Result]:
    mb = st.jsonl_bytes / 1e6
    label = f"grep -c {name}"
    convo_cmd = b.convo_cmd(st.path, "grep", "-c", pattern)
    rg_cmd = [str(rg), "-c", pattern, str(st.path / "conversations")]
    rg1_cmd = [str(rg), "-j1", "-c", pattern, str(st.path / "conversations")]
    print(f"\n== grep -c {pattern!r} ({name}), {st.count:,} conversations, {mb:.1f} MB "
          f"(median of {b.rounds} rounds) ==")

    floor = rss_floor(b)
    out = b.root / "grep-out.txt"
    cold = b.measure(f"{label} (first run)", convo_cmd, stdout_path=out)
    c_convs, c_total = convo_counts(out)
    b.measure(None, rg_cmd, stdout_path=out)
    r_convs, r_total = rg_counts(out)
    out.unlink()
    print(f"  sanity: convo found {c_total:,} matching lines in {c_convs:,} conversations; "
          f"rg {r_total:,} matching JSON lines in {r_convs:,} conversations")
    results = []
    if first:
        cold_peak = b.peaks[f"{label} (first run)"] / 1024
        print(f"  first grep of the store (cold: no outline index) {cold:8.3f} s  "
              f"{mb / cold:8.1f} MB/s   peak RSS {cold_peak:.1f} MiB (floor {floor:.1f})")
        results.append(info("grep -c first run (cold outline index)", cold, "s"))
        results.append(info("grep -c first run, peak RSS", cold_peak, "MiB"))
    if c_convs == 0:
        print("  convo found nothing: FAIL")
        results.append(Result(f"{name}: convo finds matches", 0, "> 0 convs", False, "convs"))

    c, r, r1 = alternate(b.rounds, [lambda: b.measure(label, convo_cmd),
                                    lambda: b.measure(None, rg_cmd),
                                    lambda: b.measure(None, rg1_cmd)])
    cs, rs, r1s = (statistics.median(x) for x in (c, r, r1))
    ratio = cs / rs
    peak = b.peaks[label] / 1024
    print(f"  convo grep -c   {cs:8.3f} s  {mb / cs:8.1f} MB/s   peak RSS {peak:.1f} MiB "
          f"(floor {floor:.1f})")
    print(f"  rg -c           {rs:8.3f} s  {mb / rs:8.1f} MB/s")
    print(f"  rg -j1 -c       {r1s:8.3f} s  {mb / r1s:8.1f} MB/s")
    print(f"  convo/rg {ratio:.2f} (goal <= {RATIO_GOAL:g})   convo/rg -j1 {cs / r1s:.2f}")
    print(f"  convo runs: {', '.join(f'{s:.2f}' for s in c)} s")
    results += [
        info(f"{name}: convo grep -c", cs, "s"),
        info(f"{name}: convo grep -c", mb / cs, "MB/s"),
        info(f"{name}: rg -c", rs, "s"),
        info(f"{name}: rg -j1 -c", r1s, "s"),
        info(f"{name}: convo peak RSS", peak, "MiB"),
        info(f"{name}: peak RSS floor (`true`)", floor, "MiB"),
        info(f"{name}: convo/rg -j1", cs / r1s, "x"),
        judged(f"{name}: convo/rg", ratio, RATIO_GOAL, "x"),
    ]
    return results


# --------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary", nargs="?", type=Path, default=DEFAULT_BINARY,
                        help=f"the convo binary (default: {DEFAULT_BINARY})")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds per median")
    parser.add_argument("--conversations", type=int, default=10_000,
                        help="conversations in the store (default 10,000)")
    parser.add_argument("--templates", type=int, default=40,
                        help="distinct template conversations (default 40)")
    parser.add_argument("--turns", type=int, default=5,
                        help="turns per template (default 5, ~56 KB stored)")
    parser.add_argument("--delta-depth", type=int, default=0,
                        help="git fast-import --depth: 0 (default) stores every blob whole; "
                             "50 is fast-import's own default (chains of deltas)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the first template")
    parser.add_argument("--tmp", type=Path, default=Path("/tmp"),
                        help="where to create the temporary directory (default: /tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()
    if args.conversations < 1 or args.templates < 1 or args.turns < 1 or args.rounds < 1:
        sys.exit("--conversations, --templates, --turns and --rounds must be positive")

    convo_bin = args.binary.resolve()
    if not os.access(convo_bin, os.X_OK):
        sys.exit(f"{convo_bin} is not an executable; build it with `cargo build --release`")
    for tool in ("git",):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not on PATH")
    if not GENERATOR.exists():
        sys.exit(f"{GENERATOR} is missing")
    rg = find_rg()

    sys.stdout.reconfigure(line_buffering=True)
    # fork, not vfork: a vforked child's ru_maxrss would start at Python's own peak RSS.
    subprocess._USE_VFORK = False
    bench = sealed_bench(convo_bin, args.rounds, args.seed, args.tmp)
    git_version = bench.run("git", "--version", capture=True).stdout.decode().strip()
    rg_version = bench.run(rg, "--version", capture=True).stdout.decode().splitlines()[0]
    built = datetime.fromtimestamp(convo_bin.stat().st_mtime).isoformat(timespec="seconds")
    print(f"convo: {convo_bin} (built {built})\n{git_version}; {rg_version} ({rg}); "
          f"temporary root {bench.root}; seed {args.seed}; {os.cpu_count()} CPUs")
    started = time.perf_counter()
    results: list[Result] = []
    try:
        st = build(bench, args.conversations, args.templates, args.turns, args.delta_depth)
        results.append(info("stored JSONL", st.jsonl_bytes / 1e6, "MB"))
        patterns = [("common literal", COMMON),
                    (f"rare literal (template {st.rare_template})", st.rare),
                    ("regex", REGEX)]
        for i, (name, pattern) in enumerate(patterns):
            progress(f"pattern {pattern!r}")
            results += bench_pattern(bench, st, rg, name.split(" (")[0], pattern, first=i == 0)
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
