//! A crash-state simulator (issue 42): what a power cut can leave of a store, not only what
//! `kill -9` can (the page cache survives a killed process; it does not survive the machine).
//!
//! A command runs for real under `strace -f -y -xx` (its own file system calls and those of
//! the `git` it runs), from a store whose every file is known beforehand. Chosen over an
//! `LD_PRELOAD` shim or a recording layer in the store: it sees every writer (gix, convo's
//! own, git) without changing the code under test. From the record, [`Trace::state`] makes
//! the states a power cut can leave under a model harsher than ext4's `data=ordered` with
//! delayed allocation:
//!
//! - a file's data written after its last `fsync`/`fdatasync` may be lost: the file holds
//!   any of the versions between its last synced one and its newest, or the newest cut to
//!   any length past what was synced (a torn write);
//! - a name made or removed (create, rename, link, unlink, mkdir) is kept only when the
//!   folder it was made in was synced after it; otherwise it is kept or lost on its own,
//!   in no particular order with the others (ext4's journal would keep their order: this
//!   is harsher);
//! - nothing else is ordered: only a sync orders what came before it against a cut after.
//!
//! Each state is made in a folder and checked ([`check`]): HEAD is one of the commits the
//! branch named during the command (or before it), never a commit half there, and a state
//! cut after the command had acknowledged a commit (its ref's folder synced) holds it or a
//! later one; the next ordinary command (`convo list`) succeeds; `convo fsck` passes (after
//! it removed what a cut left torn and unreachable), or names only copies that lag (the
//! working tree, the index, a lock the cut left), after whose mending as its hints say it
//! passes; `git fsck --full` passes; and once `convo fsck` passes, `git status` finds the
//! working tree and index to be HEAD's: a copy that lags with no command saying so fails.
//! Every earlier event is in HEAD's tree, which `git fsck --full` checked byte for byte by
//! its hashes.
//!
//! Seeded and reproducible: a failure names the workload, seed and state index;
//! `CONVO_CRASH_WORKLOAD=W CONVO_CRASH_SEED=S CONVO_CRASH_STATE=N cargo test --test cli
//! crash_states::every` replays that one state and keeps its folder (`CONVO_CRASH_DEBUG=1`
//! lists the recorded operations). The suite checks 8 states per workload, the workloads
//! side by side (~10 s here, two thirds of it making and recording the stores);
//! `CONVO_CRASH_STATES=N` or the ignored `crash_states_sweep` (3,000 per workload, both
//! settings) run more. What a state costs, and what keeps it small: a state drawn twice is
//! checked once (the "distinct" counts below are the states checked); `git fsck` runs once
//! per distinct content of `.git` (convo's own folder aside), not per state; and states
//! are made on a tmpfs (`/dev/shm`, where there is one): a state is a hundred small files
//! made and removed, which on this machine's busy disk took 0.7 s, more than checking it
//! (a `convo list`, a `convo fsck` and a `git fsck` of a small store: ~40 ms). Several
//! states per process is no saving to have: the checks are the real binaries.
//!
//! Measured when it was written (seed 42): `committed`, 40 states per workload, 280 in all
//! (268 distinct), no violation; `none`, 15 per workload, 87 violations in 105 states, in
//! every workload (acknowledged commits lost, refs naming empty objects). Then the sweep at
//! `CONVO_CRASH_STATES=150` (431 s here): `committed`, 1,050 states (942 distinct), no
//! violation; `none`, 668 violations in 1,050 states (append 69, burst 141, import 101,
//! compact and undo 123, pull with merge 77, redact and push 88, gc beside an append 69).
//! Those runs granted pull and redact names kept in order, and their gc ran outside the store.
//!
//! Then with every workload under the model above, git's writes synced by convo (seed 42,
//! `CONVO_CRASH_STATES=400 cargo test --test cli crash_states_sweep -- --ignored
//! --nocapture`: 6 min 4 s for both settings, on the 2-core machine at a load of 7):
//!
//! | workload | `committed`: distinct of 400 (`git fsck` runs), violations | `none`: distinct, violations |
//! |---|---|---|
//! | append | 343 (338), 0 | 391, 209 |
//! | burst of 5 appends | 397 (396), 0 | 400, 371 |
//! | import of a Codex session | 351 (331), 0 | 392, 264 |
//! | compact and undo | 391 (387), 0 | 398, 332 |
//! | pull with a merge | 284 (249), 0 | 328, 274 |
//! | redact, then push | 400 (400), 0 | 400, 383 |
//! | `git gc` beside an append | 398 (397), 0 | 399, 354 |
//! | all | 2,800 generated, 2,564 distinct (2,498 `git fsck`), 0 | 2,708 distinct, 2,187 |
//!
//! Every workload runs under that one model, those where `git` writes into the store (a
//! pull's fetch, redact's prune) too: convo orders what the git it runs writes by
//! construction (see `src/store/durable.rs`). One exception, a bystander's: the `git gc` a
//! user runs beside an append is not convo's process, and git relies on the file system
//! keeping its names in order (it syncs no folder), so that one process's name changes
//! survive in order, as ext4's journal keeps them; its data as any other's. It runs with
//! `core.fsync=committed`: with git's default, which syncs no ref, a `pack-refs` can lose
//! the branch in a power cut whatever convo does (the simulator finds it). Without that
//! rule, 41 of 60 states of that workload break with no help from convo: gc's new pack loses
//! its name while the loose objects it replaces are gone. Until this sweep the workload's
//! gc ran outside the store (`git gc` from the test's folder) and tested nothing.
//!
//! An eighth workload, an append whose commit is due for convo's own housekeeping (loose
//! objects packed, packs past `gc.autoPackLimit` packed into one, the old ones deleted):
//! at 150 states, `committed` 0 violations in 149 distinct; run on the `git gc --auto`
//! convo used before, 81 violations in 147 (a tree whose pack's name the cut lost).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::TestEnv;

/// A tiny seeded generator (xorshift*), so a state is the same on every machine.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
    fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }
}

type Inode = usize;

/// One recorded operation, on the store's files only.
#[derive(Debug, Clone)]
enum Op {
    /// A new name for a new, empty file.
    Create {
        path: PathBuf,
        inode: Inode,
    },
    Mkdir {
        path: PathBuf,
    },
    /// `inode`: the file renamed (`None`: a folder). A rename that survives carries its
    /// file even when the name it was created under did not.
    Rename {
        from: PathBuf,
        to: PathBuf,
        inode: Option<Inode>,
    },
    Link {
        to: PathBuf,
        inode: Inode,
    },
    Unlink {
        path: PathBuf,
    },
    Rmdir {
        path: PathBuf,
    },
    Write {
        inode: Inode,
        offset: u64,
        bytes: Vec<u8>,
    },
    Truncate {
        inode: Inode,
        len: u64,
    },
    SyncFile {
        inode: Inode,
    },
    SyncDir {
        path: PathBuf,
    },
}

impl Op {
    /// The folder whose sync makes this name change durable.
    fn dir(&self) -> Option<&Path> {
        match self {
            Op::Create { path, .. } | Op::Mkdir { path } | Op::Unlink { path } | Op::Rmdir { path } => path.parent(),
            Op::Rename { to, .. } | Op::Link { to, .. } => to.parent(),
            _ => None,
        }
    }
}

/// A command's record, over the store as it was before it.
struct Trace {
    root: PathBuf,
    /// Every file before the command: its path and content (inode = index).
    base: Vec<Vec<u8>>,
    base_names: BTreeMap<PathBuf, Inode>,
    base_dirs: BTreeSet<PathBuf>,
    ops: Vec<Op>,
    /// Per operation: made by a bystander, a process convo did not start (the `git gc` a
    /// user runs beside it), whose names survive in the order they were made (see
    /// [`Trace::state`]).
    bystander: Vec<bool>,
    inodes: usize,
}

/// What strace printed of one call: its name, its arguments' text and its result.
fn split_call(line: &str) -> Option<(&str, &str, &str)> {
    let open = line.find('(')?;
    // A resumed call's result is padded: `<... fsync resumed>)          = 0`.
    let equals = line.rfind(" = ")?;
    let close = line[..equals].trim_end().strip_suffix(')')?.len();
    Some((&line[..open], &line[open + 1..close], &line[equals + 3..]))
}

/// The strings (`"\x2f…"`) and `fd</path>` annotations of an argument list, in order.
fn strings(args: &str) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let b = args.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'"' {
            let mut s = Vec::new();
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' && b.get(i + 1) == Some(&b'x') {
                    s.push(u8::from_str_radix(std::str::from_utf8(&b[i + 2..i + 4]).unwrap(), 16).unwrap());
                    i += 4;
                } else if b[i] == b'\\' {
                    s.push(match b[i + 1] {
                        b'n' => b'\n',
                        b't' => b'\t',
                        c => c,
                    });
                    i += 2;
                } else {
                    s.push(b[i]);
                    i += 1;
                }
            }
            out.push(s);
        }
        i += 1;
    }
    out
}

/// The `</path>` annotations strace's `-y` adds to file descriptors, in order.
fn fd_paths(args: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut rest = args;
    while let Some(start) = rest.find("</").or_else(|| rest.find("<\\x2f")) {
        let tail = &rest[start + 1..];
        let end = tail.find('>').unwrap_or(tail.len());
        let raw = strings(&format!("\"{}\"", &tail[..end])).pop().unwrap_or_default();
        out.push(PathBuf::from(String::from_utf8_lossy(&raw).into_owned()));
        rest = &tail[end..];
    }
    out
}

fn fd_number(arg: &str) -> Option<i64> {
    arg.trim().split('<').next()?.trim().parse().ok()
}

impl Trace {
    /// Run `command` in `env` under strace, recording what it does to the store.
    fn record(env: &TestEnv, command: Command, stdin: &str) -> Trace {
        let root = env.store.clone();
        let mut base = Vec::new();
        let mut base_names = BTreeMap::new();
        let mut base_dirs = BTreeSet::new();
        walk(&root, &root, &mut base, &mut base_names, &mut base_dirs);
        let log = env.root.join("strace.log");
        let mut args: Vec<std::ffi::OsString> =
            ["-f", "-y", "-xx", "-qq", "-s", "100000000", "-o"].iter().map(Into::into).collect();
        args.push(log.clone().into());
        args.push("-e".into());
        args.push("trace=open,openat,creat,write,pwrite64,writev,pwritev,lseek,rename,renameat,renameat2,link,linkat,unlink,unlinkat,mkdir,mkdirat,rmdir,ftruncate,truncate,fsync,fdatasync,chdir,close,execve,clone,clone3,fork,vfork".into());
        let traced = under_strace(&command, &args);
        let run = crate::common::run_command(traced, stdin);
        assert_eq!(run.code, 0, "the recorded command failed:\n{}", run.stderr);
        let text = std::fs::read_to_string(&log).unwrap();
        let mut trace =
            Trace { root, inodes: base.len(), base, base_names, base_dirs, ops: Vec::new(), bystander: Vec::new() };
        trace.parse(&text);
        trace
    }

    fn parse(&mut self, text: &str) {
        let mut names: HashMap<PathBuf, Inode> = self.base_names.clone().into_iter().collect();
        let mut sizes: HashMap<Inode, u64> = self.base.iter().enumerate().map(|(i, b)| (i, b.len() as u64)).collect();
        let mut positions: HashMap<(u32, i64), u64> = HashMap::new();
        let mut cwd: HashMap<u32, PathBuf> = HashMap::new();
        let mut pending: HashMap<u32, String> = HashMap::new();
        let mut opened: HashMap<(u32, i64), PathBuf> = HashMap::new();
        // Who started whom, and what each process runs: a process is convo's when it or an
        // ancestor runs the convo binary.
        let mut parents: HashMap<u32, u32> = HashMap::new();
        let mut programs: HashMap<u32, String> = HashMap::new();
        let convos = |pid: u32, parents: &HashMap<u32, u32>, programs: &HashMap<u32, String>| {
            let mut at = Some(pid);
            while let Some(p) = at {
                if programs.get(&p).is_some_and(|exe| exe.ends_with("/convo")) {
                    return true;
                }
                at = parents.get(&p).copied();
            }
            false
        };
        let mut bystander = false;
        for raw in text.lines() {
            let Some((pid, rest)) = raw.split_once(' ') else { continue };
            let Ok(pid) = pid.trim().parse::<u32>() else { continue };
            // The operations the previous line made are its process's.
            self.bystander.resize(self.ops.len(), bystander);
            bystander = !convos(pid, &parents, &programs);
            let rest = rest.trim_start();
            let line = if let Some(head) = rest.strip_suffix(" <unfinished ...>") {
                pending.insert(pid, head.to_owned());
                continue;
            } else if rest.starts_with("<... ") {
                let Some(head) = pending.remove(&pid) else { continue };
                let tail = &rest[rest.find("resumed>").map_or(0, |i| i + 8)..];
                format!("{head}{tail}")
            } else {
                rest.to_owned()
            };
            let Some((call, args, result)) = split_call(&line) else { continue };
            if result.starts_with('-') || result.starts_with('?') {
                continue;
            }
            let ret: i64 =
                result.split_whitespace().next().and_then(|r| r.split('<').next()?.parse().ok()).unwrap_or(0);
            let here = cwd.get(&pid).cloned().unwrap_or_else(|| self.root.clone());
            let strs = strings(args);
            let mut fds = fd_paths(args);
            // A call strace split (another thread ran meanwhile) loses its `-y` annotations:
            // the descriptor's path is then the one its open returned.
            if fds.is_empty()
                && let Some(fd) = fd_number(args.split(',').next().unwrap_or(""))
                && let Some(path) = opened.get(&(pid, fd))
            {
                fds.push(path.clone());
            }
            let resolve = |base: &Path, s: &[u8]| -> PathBuf {
                let p = PathBuf::from(String::from_utf8_lossy(s).into_owned());
                normalize(&if p.is_absolute() { p } else { base.join(p) })
            };
            // The folder a `*at` call's relative path starts from: its first fd's path.
            let at_base = fds.first().cloned().unwrap_or_else(|| here.clone());
            match call {
                "clone" | "clone3" | "fork" | "vfork" => {
                    if let Ok(child) = u32::try_from(ret) {
                        parents.insert(child, pid);
                    }
                }
                "execve" => {
                    if let Some(s) = strs.first() {
                        programs.insert(pid, String::from_utf8_lossy(s).into_owned());
                        bystander = !convos(pid, &parents, &programs);
                    }
                }
                "chdir" => {
                    if let Some(s) = strs.first() {
                        cwd.insert(pid, resolve(&here, s));
                    }
                }
                "open" | "openat" | "creat" => {
                    let Some(s) = strs.first() else { continue };
                    let path = match call {
                        "openat" => resolve(&at_base, s),
                        _ => resolve(&here, s),
                    };
                    let flags = args;
                    let creates = call == "creat" || flags.contains("O_CREAT");
                    opened.insert((pid, ret), path.clone());
                    if !path.starts_with(&self.root) || flags.contains("O_DIRECTORY") {
                        continue;
                    }
                    let inode = match names.get(&path) {
                        Some(&inode) => inode,
                        None if creates => {
                            let inode = self.inodes;
                            self.inodes += 1;
                            names.insert(path.clone(), inode);
                            sizes.insert(inode, 0);
                            self.ops.push(Op::Create { path: path.clone(), inode });
                            inode
                        }
                        None => continue,
                    };
                    if flags.contains("O_TRUNC") || call == "creat" {
                        sizes.insert(inode, 0);
                        self.ops.push(Op::Truncate { inode, len: 0 });
                    }
                    let pos = if flags.contains("O_APPEND") { u64::MAX } else { 0 };
                    positions.insert((pid, ret), pos);
                }
                "write" | "writev" | "pwrite64" | "pwritev" => {
                    let Some(path) = fds.first() else { continue };
                    let Some(&inode) = names.get(&normalize(path)) else { continue };
                    let fd = fd_number(args.split(',').next().unwrap_or("")).unwrap_or(-1);
                    let bytes: Vec<u8> = strs.concat();
                    let bytes = bytes[..(ret as usize).min(bytes.len())].to_vec();
                    let size = sizes.get(&inode).copied().unwrap_or(0);
                    let offset = if call.starts_with('p') {
                        args.rsplit(',').next().and_then(|o| o.trim().parse().ok()).unwrap_or(size)
                    } else {
                        let pos = positions.get(&(pid, fd)).copied().unwrap_or(u64::MAX);
                        let at = if pos == u64::MAX { size } else { pos };
                        if pos != u64::MAX {
                            positions.insert((pid, fd), at + bytes.len() as u64);
                        }
                        at
                    };
                    sizes.insert(inode, size.max(offset + bytes.len() as u64));
                    self.ops.push(Op::Write { inode, offset, bytes });
                }
                // Forgotten, so that a later write on the same number (a pipe to `git
                // receive-pack`) whose annotation strace lost is not taken for this file's.
                "close" => {
                    let fd = fd_number(args).unwrap_or(-1);
                    opened.remove(&(pid, fd));
                    positions.remove(&(pid, fd));
                }
                "lseek" => {
                    let fd = fd_number(args.split(',').next().unwrap_or("")).unwrap_or(-1);
                    positions.insert((pid, fd), ret as u64);
                }
                "ftruncate" | "truncate" => {
                    let path = if call == "ftruncate" {
                        fds.first().cloned()
                    } else {
                        strs.first().map(|s| resolve(&here, s))
                    };
                    let Some(path) = path else { continue };
                    let Some(&inode) = names.get(&normalize(&path)) else { continue };
                    let len = args.rsplit(',').next().and_then(|o| o.trim().parse().ok()).unwrap_or(0);
                    sizes.insert(inode, len);
                    self.ops.push(Op::Truncate { inode, len });
                }
                "fsync" | "fdatasync" => {
                    let Some(path) = fds.first() else { continue };
                    let path = normalize(path);
                    if !path.starts_with(&self.root) {
                        continue;
                    }
                    match names.get(&path) {
                        Some(&inode) => self.ops.push(Op::SyncFile { inode }),
                        None => self.ops.push(Op::SyncDir { path }),
                    }
                }
                "rename" | "renameat" | "renameat2" | "link" | "linkat" => {
                    let (from, to) = if call.ends_with("at") || call == "renameat2" {
                        let (a, b) =
                            (fds.first().cloned().unwrap_or(here.clone()), fds.get(1).cloned().unwrap_or(here.clone()));
                        (resolve(&a, &strs[0]), resolve(&b, &strs[1]))
                    } else {
                        (resolve(&here, &strs[0]), resolve(&here, &strs[1]))
                    };
                    if !to.starts_with(&self.root) {
                        continue;
                    }
                    let Some(inode) = names.get(&from).copied() else {
                        // A folder renamed (a quarantine's): names below it move too.
                        let moved: Vec<(PathBuf, Inode)> =
                            names.iter().filter(|(p, _)| p.starts_with(&from)).map(|(p, i)| (p.clone(), *i)).collect();
                        for (p, i) in moved {
                            names.remove(&p);
                            names.insert(to.join(p.strip_prefix(&from).unwrap()), i);
                        }
                        self.ops.push(Op::Rename { from, to, inode: None });
                        continue;
                    };
                    if call.starts_with("link") {
                        names.insert(to.clone(), inode);
                        self.ops.push(Op::Link { to, inode });
                    } else {
                        names.remove(&from);
                        names.insert(to.clone(), inode);
                        self.ops.push(Op::Rename { from, to, inode: Some(inode) });
                    }
                }
                "unlink" | "unlinkat" | "rmdir" => {
                    let Some(s) = strs.first() else { continue };
                    let path = if call == "unlinkat" { resolve(&at_base, s) } else { resolve(&here, s) };
                    if !path.starts_with(&self.root) {
                        continue;
                    }
                    if call == "rmdir" || args.contains("AT_REMOVEDIR") {
                        self.ops.push(Op::Rmdir { path });
                    } else {
                        names.remove(&path);
                        self.ops.push(Op::Unlink { path });
                    }
                }
                "mkdir" | "mkdirat" => {
                    let Some(s) = strs.first() else { continue };
                    let path = if call == "mkdirat" { resolve(&at_base, s) } else { resolve(&here, s) };
                    if path.starts_with(&self.root) {
                        self.ops.push(Op::Mkdir { path });
                    }
                }
                _ => {}
            }
        }
        self.bystander.resize(self.ops.len(), bystander);
    }

    /// The files (path → content) and folders a power cut after `cut` operations may leave,
    /// the choices drawn from `rng`. A bystander's name changes (see `bystander`) survive
    /// in order, as ext4's journal keeps them (every one before the last sync of anything,
    /// then a prefix of the rest): git relies on that order and syncs no folder, and a user's
    /// `git gc` is not convo's to change. Every other name change survives or not on its own.
    fn state(&self, cut: usize, rng: &mut Rng) -> (BTreeMap<PathBuf, Vec<u8>>, BTreeSet<PathBuf>) {
        let ops = &self.ops[..cut];
        // ext4's journal: any sync commits every name change made before it.
        let last_sync = ops.iter().rposition(|op| matches!(op, Op::SyncFile { .. } | Op::SyncDir { .. })).unwrap_or(0);
        let kept_before = last_sync.max(rng.below(cut as u64 + 1) as usize);
        // Which name changes survive.
        let mut synced_dirs_after: Vec<BTreeSet<PathBuf>> = vec![BTreeSet::new(); ops.len() + 1];
        for i in (0..ops.len()).rev() {
            synced_dirs_after[i] = synced_dirs_after[i + 1].clone();
            if let Op::SyncDir { path } = &ops[i] {
                synced_dirs_after[i].insert(path.clone());
            }
        }
        let mut names: BTreeMap<PathBuf, Inode> = self.base_names.clone();
        let mut dirs = self.base_dirs.clone();
        // Per inode: the index of its last sync (its data up to there is on disk).
        let mut last_sync: HashMap<Inode, usize> = HashMap::new();
        for (i, op) in ops.iter().enumerate() {
            if let Op::SyncFile { inode } = op {
                last_sync.insert(*inode, i);
            }
        }
        for (i, op) in ops.iter().enumerate() {
            let Some(dir) = op.dir() else { continue };
            let durable = synced_dirs_after[i + 1].contains(dir);
            let lost = if self.bystander.get(i).copied().unwrap_or(false) { i >= kept_before } else { rng.coin() };
            if !durable && lost {
                continue;
            }
            match op {
                Op::Create { path, inode } if path.parent().is_some_and(|p| dirs.contains(p)) => {
                    names.insert(path.clone(), *inode);
                }
                Op::Mkdir { path } if path.parent().is_some_and(|p| dirs.contains(p)) => {
                    dirs.insert(path.clone());
                }
                Op::Rename { to, .. } | Op::Link { to, .. } if !to.parent().is_some_and(|p| dirs.contains(p)) => {}
                Op::Link { to, inode, .. } => {
                    names.insert(to.clone(), *inode);
                }
                Op::Rename { from, to, inode } => {
                    if let Some(inode) = inode {
                        if names.get(from) == Some(inode) {
                            names.remove(from);
                        }
                        names.insert(to.clone(), *inode);
                    } else if dirs.contains(from) {
                        let moved: Vec<(PathBuf, Inode)> =
                            names.iter().filter(|(p, _)| p.starts_with(from)).map(|(p, i)| (p.clone(), *i)).collect();
                        for (p, inode) in moved {
                            names.remove(&p);
                            names.insert(to.join(p.strip_prefix(from).unwrap()), inode);
                        }
                        let sub: Vec<PathBuf> = dirs.iter().filter(|d| d.starts_with(from)).cloned().collect();
                        for d in sub {
                            dirs.remove(&d);
                            dirs.insert(to.join(d.strip_prefix(from).unwrap()));
                        }
                    }
                }
                Op::Unlink { path } => {
                    names.remove(path);
                }
                Op::Rmdir { path } if !names.keys().any(|p| p.starts_with(path)) => {
                    dirs.remove(path);
                }
                _ => {}
            }
        }
        // Which data survives, per inode still named.
        let mut data_ops: HashMap<Inode, Vec<usize>> = HashMap::new();
        for (i, op) in ops.iter().enumerate() {
            if let Op::Write { inode, .. } | Op::Truncate { inode, .. } = op {
                data_ops.entry(*inode).or_default().push(i);
            }
        }
        let mut contents: HashMap<Inode, Vec<u8>> = HashMap::new();
        let mut files = BTreeMap::new();
        for (path, inode) in &names {
            if !path.parent().is_some_and(|p| dirs.contains(p)) {
                continue;
            }
            let content = contents
                .entry(*inode)
                .or_insert_with(|| {
                    let list = data_ops.get(inode).map(Vec::as_slice).unwrap_or(&[]);
                    let synced = last_sync.get(inode).map_or(0, |&s| list.iter().filter(|&&i| i < s).count());
                    let keep = synced + rng.below((list.len() - synced + 1) as u64) as usize;
                    let apply = |n: usize| {
                        let mut c = self.base.get(*inode).cloned().unwrap_or_default();
                        for &i in &list[..n] {
                            match &ops[i] {
                                Op::Write { offset, bytes, .. } => {
                                    let end = *offset as usize + bytes.len();
                                    if c.len() < end {
                                        c.resize(end, 0);
                                    }
                                    c[*offset as usize..end].copy_from_slice(bytes);
                                }
                                Op::Truncate { len, .. } => c.resize(*len as usize, 0),
                                _ => {}
                            }
                        }
                        c
                    };
                    let mut c = apply(keep);
                    // Torn: cut anywhere past what was synced.
                    let floor = apply(synced).len().min(c.len());
                    if keep > synced && c.len() > floor && rng.below(3) == 0 {
                        c.truncate(floor + rng.below((c.len() - floor) as u64) as usize);
                    }
                    c
                })
                .clone();
            files.insert(path.clone(), content);
        }
        (files, dirs)
    }
}

/// `command` run under `strace` with `args`, in the same environment and folder.
fn under_strace(command: &Command, args: &[std::ffi::OsString]) -> Command {
    let mut traced = Command::new("strace");
    traced.args(args).arg(command.get_program()).args(command.get_args());
    if command.get_envs().any(|(k, _)| k == "PATH") {
        // A sealed command: its environment is the whole of it.
        traced.env_clear();
    }
    for (key, value) in command.get_envs() {
        match value {
            Some(v) => traced.env(key, v),
            None => traced.env_remove(key),
        };
    }
    if let Some(dir) = command.get_current_dir() {
        traced.current_dir(dir);
    }
    traced
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn walk(
    root: &Path,
    dir: &Path,
    base: &mut Vec<Vec<u8>>,
    names: &mut BTreeMap<PathBuf, Inode>,
    dirs: &mut BTreeSet<PathBuf>,
) {
    dirs.insert(dir.to_owned());
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            walk(root, &path, base, names, dirs);
        } else {
            names.insert(path.clone(), base.len());
            base.push(std::fs::read(&path).unwrap());
        }
    }
    let _ = root;
}

/// Write a state under `into`, as the store was at `root`.
fn materialise(root: &Path, into: &Path, files: &BTreeMap<PathBuf, Vec<u8>>, dirs: &BTreeSet<PathBuf>) {
    for dir in dirs {
        std::fs::create_dir_all(into.join(dir.strip_prefix(root).unwrap())).unwrap();
    }
    for (path, content) in files {
        std::fs::write(into.join(path.strip_prefix(root).unwrap()), content).unwrap();
    }
}

/// What a state must show.
struct Expect {
    /// The commits the branch named before and during the command, oldest first.
    heads: Vec<String>,
    /// Per commit after the first of `heads`: the operation after which it was
    /// acknowledged (its ref renamed into place and, when synced, its folder synced): a
    /// state cut at or after it holds that commit or a later one.
    acknowledged: Vec<usize>,
    branch: String,
}

/// Check one state in `dir` (a copy of the store); the violation, if any. `checked`: the
/// `git fsck` verdicts of the repositories already checked, by their content: many states
/// differ only in convo's caches or the working tree, and one `git fsck` answers for all.
fn check(env: &TestEnv, dir: &Path, cut: usize, expect: &Expect, checked: &mut GitFscks) -> Option<String> {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap()
    };
    let head = std::fs::read_to_string(dir.join(".git").join(&expect.branch))
        .ok()
        .map(|s| s.trim().to_owned())
        .or_else(|| {
            let packed = std::fs::read_to_string(dir.join(".git/packed-refs")).ok()?;
            packed.lines().find(|l| l.ends_with(&format!(" {}", expect.branch))).map(|l| l[..40].to_owned())
        });
    let Some(head) = head else { return Some(format!("no {} after the cut", expect.branch)) };
    let Some(at) = expect.heads.iter().position(|h| *h == head) else {
        return Some(format!("{} names {head:?}, a commit the command never made", expect.branch));
    };
    let due = expect.acknowledged.iter().filter(|&&a| a <= cut).count();
    if at < due {
        return Some(format!("the command had acknowledged {}, the state holds {head}", expect.heads[due]));
    }
    let convo = |args: &[&str]| {
        let mut command = env.command(args);
        command.env("CONVO_DIR", dir);
        let out = command.output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
        )
    };
    // The next ordinary command after the reboot: it opens the store and finishes what the
    // journal says a cut interrupted.
    let (listed, told) = convo(&["list"]);
    if !listed {
        return Some(format!("convo list after the cut: {told}"));
    }
    let (clean, told) = convo(&["fsck"]);
    if !clean {
        // The working tree and index are copies of HEAD that may lag after a power cut, as
        // long as fsck says so: mended as its hints say, then everything else must pass.
        let only_copies = told.lines().filter(|l| l.contains(": ")).all(|l| {
            l.starts_with("hint:")
                || l.starts_with("error:")
                || l.starts_with("removed torn object")
                || l.contains("working tree")
                || l.contains("index")
                || l.contains("stale git lock")
                // What a stale lock stops (housekeeping), said beside it.
                || (l.contains("need packing") && l.contains(".lock exists"))
        });
        if !only_copies {
            return Some(format!("convo fsck: {told}"));
        }
        // Locks left by the cut (every process died with it): the next convo write takes
        // them over, as fsck says.
        remove_locks(&dir.join(".git"));
        let _ = std::fs::remove_file(dir.join(".git/index"));
        git(&["reset", "--quiet"]);
        git(&["checkout", "HEAD", "--", "."]);
        let (clean, again) = convo(&["fsck"]);
        if !clean {
            return Some(format!("convo fsck after mending the copies: {again}{told}"));
        }
    }
    let key = git_content(dir);
    let verdict = checked.entry(key).or_insert_with(|| {
        let out = git(&["fsck", "--full", "--no-dangling", "--no-progress"]);
        (!out.status.success()).then(|| format!("git fsck: {}", String::from_utf8_lossy(&out.stderr)))
    });
    if let Some(why) = verdict {
        return Some(why.clone());
    }
    // convo fsck passed: the working tree and index must then be HEAD's, as git sees them
    // too. A copy that lags and no command saying so is the silent disagreement.
    let status = git(&["status", "--porcelain", "--untracked-files=all"]);
    let status = String::from_utf8_lossy(&status.stdout);
    if !status.trim().is_empty() {
        return Some(format!("convo fsck passed, but the working tree or index differs from HEAD:\n{status}"));
    }
    None
}

/// `git fsck` verdicts by repository content.
type GitFscks = HashMap<u64, Option<String>>;

/// A hash of every file under `dir/.git` that `git fsck` reads (all but convo's own).
fn git_content(dir: &Path) -> u64 {
    fn walk(path: &Path, skip: &Path, hasher: &mut std::hash::DefaultHasher) {
        let mut entries: Vec<_> = std::fs::read_dir(path).into_iter().flatten().flatten().map(|e| e.path()).collect();
        entries.sort();
        for entry in entries {
            if entry == skip {
                continue;
            }
            std::hash::Hash::hash(entry.file_name().unwrap_or_default(), hasher);
            if entry.is_dir() {
                walk(&entry, skip, hasher);
            } else {
                std::hash::Hash::hash(&std::fs::read(&entry).unwrap_or_default(), hasher);
            }
        }
    }
    let git_dir = dir.join(".git");
    let mut hasher = std::hash::DefaultHasher::new();
    walk(&git_dir, &git_dir.join("convo"), &mut hasher);
    std::hash::Hasher::finish(&hasher)
}

/// A workload: a store made by `setup`, then the one command recorded.
struct Workload<'a> {
    name: &'a str,
    setup: &'a (dyn Fn(&TestEnv) + Sync),
    command: &'a (dyn Fn(&TestEnv) -> (Command, String) + Sync),
    fsync: &'a str,
}

/// What a sweep of one workload found.
struct Swept {
    states: usize,
    /// States checked: a state drawn twice is checked once.
    distinct: usize,
    /// `git fsck` runs: one per distinct repository content.
    git_fscks: usize,
    violations: Vec<String>,
}

/// Generate `states` crash states of `workload` from `seed`; the violations found.
fn sweep(workload: &Workload, seed: u64, states: usize) -> Swept {
    let env = TestEnv::new();
    let config = env.home().join(".config/convo");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), format!("[store]\nfsync = \"{}\"\n", workload.fsync)).unwrap();
    (workload.setup)(&env);
    let branch = env.git(&["symbolic-ref", "HEAD"]).trim().to_owned();
    let before = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    let (command, stdin) = (workload.command)(&env);
    let trace = Trace::record(&env, command, &stdin);
    if std::env::var_os("CONVO_CRASH_DEBUG").is_some() {
        for (i, op) in trace.ops.iter().enumerate() {
            let text = format!("{op:?}");
            eprintln!("{i}{}: {}", if trace.bystander[i] { " (bystander)" } else { "" }, &text[..text.len().min(200)]);
        }
    }
    let ref_path = trace.root.join(".git").join(&branch);
    // The values the branch took: what each ref file renamed into place held (a reflog
    // would not do: redact expires it).
    let mut heads = vec![before];
    for op in &trace.ops {
        if let Op::Rename { to, inode: Some(inode), .. } = op
            && *to == ref_path
        {
            let mut content = Vec::new();
            for op in &trace.ops {
                if let Op::Write { inode: i, offset, bytes } = op
                    && i == inode
                {
                    let end = *offset as usize + bytes.len();
                    content.resize(content.len().max(end), 0);
                    content[*offset as usize..end].copy_from_slice(bytes);
                }
            }
            heads.push(String::from_utf8_lossy(&content).trim().to_owned());
        }
    }
    let acknowledged: Vec<usize> = trace
        .ops
        .iter()
        .enumerate()
        .filter(|(_, op)| matches!(op, Op::Rename { to, .. } if *to == ref_path))
        .map(|(i, _)| {
            let synced = trace.ops[i..]
                .iter()
                .position(|op| matches!(op, Op::SyncDir { path } if Some(path.as_path()) == ref_path.parent()));
            i + synced.unwrap_or(0) + 1
        })
        .collect();
    assert_eq!(acknowledged.len(), heads.len() - 1, "{}: one ref rename per commit", workload.name);
    assert!(heads.len() > 1, "{}: the command committed nothing", workload.name);
    let expect = Expect { heads, acknowledged, branch };
    let last = expect.acknowledged.last().copied().unwrap_or(0);
    let only: Option<usize> = std::env::var("CONVO_CRASH_STATE").ok().and_then(|s| s.parse().ok());
    let seed = std::env::var("CONVO_CRASH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(seed);
    // In memory where there is a tmpfs: a state is some hundred small files, made and
    // removed, which on a busy disk cost more than checking it.
    let shm = Path::new("/dev/shm");
    let scratch = if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.unwrap();
    let mut git_fscks = GitFscks::new();
    let mut verdicts: HashMap<u64, Option<String>> = HashMap::new();
    let mut violations = Vec::new();
    let mut distinct = 0;
    for index in 0..states {
        if only.is_some_and(|o| o != index) {
            continue;
        }
        let mut rng = Rng::new(seed ^ (index as u64).wrapping_mul(0x1000_0000_01b3));
        // Cuts near the end (the barrier and the ref) are drawn as often as the rest.
        let n = trace.ops.len();
        let cut = if rng.coin() {
            rng.below(n as u64 + 1) as usize
        } else {
            n - rng.below((n - last.min(n)) as u64 + 8).min(n as u64) as usize
        };
        let (files, dirs) = trace.state(cut, &mut rng);
        let mut hasher = std::hash::DefaultHasher::new();
        std::hash::Hash::hash(&expect.acknowledged.iter().filter(|&&a| a <= cut).count(), &mut hasher);
        std::hash::Hash::hash(&files, &mut hasher);
        std::hash::Hash::hash(&dirs, &mut hasher);
        let key = std::hash::Hasher::finish(&hasher);
        let verdict = verdicts.entry(key).or_insert_with(|| {
            distinct += 1;
            let dir = scratch.path().join(format!("{index}"));
            materialise(&trace.root, &dir, &files, &dirs);
            let verdict = check(&env, &dir, cut, &expect, &mut git_fscks);
            if only.is_some() {
                eprintln!("state {index} (cut {cut} of {n}) kept in {}", dir.display());
            } else {
                let _ = std::fs::remove_dir_all(&dir);
            }
            verdict
        });
        if let Some(why) = verdict {
            if violations.is_empty() || only.is_some() {
                eprintln!("first violation: state {index}, cut {cut} of {n}: {why}");
            }
            violations.push(format!(
                "{} (store.fsync={}): state {index} (cut after {cut} of {n} operations): {why}\n  replay: CONVO_CRASH_SEED={seed} CONVO_CRASH_STATE={index} cargo test --test cli crash_states",
                workload.name, workload.fsync
            ));
        }
    }
    if only.is_some() {
        std::mem::forget(scratch);
    }
    Swept { states, distinct, git_fscks: git_fscks.len(), violations }
}

fn convo_in(env: &TestEnv, script: &str) -> (Command, String) {
    let mut command = env.sealed("sh");
    command.args(["-c", script]).env("CONVO_DIR", &env.store).env("CONVO", env!("CARGO_BIN_EXE_convo"));
    (command, String::new())
}

fn history(env: &TestEnv) {
    env.new_conversation("crash");
    env.run(&["append", "--user", "hello"]).ok();
    env.run(&["append", "--tool-call", "grep", "--args", r#"{"q":"x"}"#, "--call-id", "c1"]).ok();
    env.run(&["append", "--tool-result", "c1", "--content", "found it"]).ok();
}

/// Three turns with tool calls: a compaction of all but the last has something to strip.
fn turns(env: &TestEnv) {
    history(env);
    env.run(&["append", "--user", "second"]).ok();
    env.run(&["append", "--tool-call", "grep", "--args", r#"{"q":"y"}"#, "--call-id", "c2"]).ok();
    env.run(&["append", "--tool-result", "c2", "--content", "found that too, a long enough result to strip"]).ok();
    env.run(&["append", "--user", "third"]).ok();
}

fn shared(env: &TestEnv) {
    history(env);
    let hub = crate::common::bare(&env.root, "hub");
    env.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    env.run(&["push"]).ok();
}

/// A store that pushed to a hub, then another clone of the hub pushed an append to the same
/// conversation while this one appended its own: its next pull merges.
fn diverged(env: &TestEnv) {
    shared(env);
    let other = TestEnv::bare_at(100);
    other.run(&["clone", env.root.join("hub.git").to_str().unwrap(), other.store.to_str().unwrap()]).ok();
    other.run(&["switch", "crash"]).ok();
    other.run(&["append", "--user", "from elsewhere"]).ok();
    other.run(&["push"]).ok();
    env.run(&["append", "--user", "from here"]).ok();
    std::mem::forget(other);
}

fn redactable(env: &TestEnv) {
    shared(env);
    env.run(&["append", "--user", "my key is hunter2-secret"]).ok();
}

/// A store whose next commit runs convo's housekeeping, all of it: `gc.auto` at 1 and two
/// loose objects planted in `objects/17`, the folder git's threshold (and convo's) samples;
/// its history already packed and `gc.autoPackLimit` at 1, so the new pack makes two and
/// they are packed into one (old packs deleted).
fn due_for_gc(env: &TestEnv) {
    history(env);
    env.git(&["repack", "-a", "-d", "-q"]);
    env.git(&["config", "gc.auto", "1"]);
    env.git(&["config", "gc.autoPackLimit", "1"]);
    let candidates = tempfile::tempdir().unwrap();
    let paths: Vec<String> = (0..2000)
        .map(|i| {
            let path = candidates.path().join(format!("{i}"));
            std::fs::write(&path, format!("planted {i}\n")).unwrap();
            path.to_string_lossy().into_owned()
        })
        .collect();
    let hash = |write: bool, paths: &[String]| -> String {
        let mut args = vec!["hash-object"];
        if write {
            args.push("-w");
        }
        args.push("--");
        let mut args: Vec<&str> = args;
        args.extend(paths.iter().map(String::as_str));
        env.git(&args)
    };
    let ids = hash(false, &paths);
    let in_17: Vec<String> =
        ids.lines().zip(&paths).filter(|(id, _)| id.starts_with("17")).map(|(_, p)| p.clone()).take(2).collect();
    assert_eq!(in_17.len(), 2, "two of the candidates hash into objects/17");
    hash(true, &in_17);
}

fn workloads(fsync: &str) -> Vec<Workload<'_>> {
    vec![
        Workload {
            name: "append",
            setup: &history,
            command: &|env| {
                let mut c = env.command(&["append", "--user", "acknowledged"]);
                c.env("CONVO_DIR", &env.store);
                (c, String::new())
            },
            fsync,
        },
        Workload {
            name: "burst",
            setup: &history,
            command: &|env| {
                convo_in(
                    env,
                    r#"for i in 1 2 3 4 5; do CONVO_NOW="2026-01-09T00:0$i:00Z" "$CONVO" append --user "burst $i" || exit 1; done"#,
                )
            },
            fsync,
        },
        Workload {
            name: "import",
            setup: &history,
            command: &|env| {
                let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codex-0.169.jsonl");
                convo_in(env, &format!(r#""$CONVO" import '{}'"#, fixture.display()))
            },
            fsync,
        },
        Workload {
            name: "compact_and_undo",
            setup: &turns,
            command: &|env| {
                convo_in(
                    env,
                    r#"CONVO_NOW=2026-01-09T00:01:00Z "$CONVO" compact --profile strip --to -1 && CONVO_NOW=2026-01-09T00:02:00Z "$CONVO" compact --undo"#,
                )
            },
            fsync,
        },
        Workload { name: "pull_merge", setup: &diverged, command: &|env| convo_in(env, r#""$CONVO" pull"#), fsync },
        Workload {
            name: "redact_push",
            setup: &redactable,
            command: &|env| convo_in(env, r#""$CONVO" redact hunter2-secret && "$CONVO" push"#),
            fsync,
        },
        Workload {
            name: "append_with_gc",
            setup: &due_for_gc,
            command: &|env| {
                let mut c = env.command(&["append", "--user", "packed after"]);
                c.env("CONVO_DIR", &env.store);
                (c, String::new())
            },
            fsync,
        },
        Workload {
            name: "gc_beside_append",
            setup: &history,
            command: &|env| {
                convo_in(
                    env,
                    r#"git -c core.fsync=committed -C "$CONVO_DIR" gc --quiet & "$CONVO" append --user "beside gc"; s=$?; wait; exit $s"#,
                )
            },
            fsync,
        },
    ]
}

/// Sweep every workload (or those `CONVO_CRASH_WORKLOAD` names); `together`: each in a
/// thread of its own, for the suite, whose time goes mostly to making and recording the
/// stores (git's pushes and clones, real syncs), waits that overlap well. The sweep whose
/// duration the module doc states runs them one after another.
fn run_all(fsync: &str, states: usize, together: bool) -> (Vec<String>, Vec<String>) {
    let only = std::env::var("CONVO_CRASH_WORKLOAD").ok();
    let chosen: Vec<Workload> = workloads(fsync)
        .into_iter()
        .filter(|w| only.as_deref().is_none_or(|o| o.split(',').any(|name| name == w.name)))
        .collect();
    let swept: Vec<Swept> = if together {
        std::thread::scope(|scope| {
            let handles: Vec<_> = chosen.iter().map(|w| scope.spawn(move || sweep(w, 42, states))).collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    } else {
        chosen.iter().map(|w| sweep(w, 42, states)).collect()
    };
    let mut lines = Vec::new();
    let mut violations = Vec::new();
    for (workload, swept) in chosen.iter().zip(swept) {
        lines.push(format!(
            "{}: {} states ({} distinct, {} git fsck), {} violations",
            workload.name,
            swept.states,
            swept.distinct,
            swept.git_fscks,
            swept.violations.len()
        ));
        eprintln!("{}", lines.last().unwrap());
        violations.extend(swept.violations);
    }
    (lines, violations)
}

/// Every acknowledged event survives every power cut the model allows, in every workload.
#[test]
fn every_acknowledged_commit_survives_a_power_cut_at_any_moment() {
    let (lines, violations) = run_all("committed", states(), true);
    eprintln!("{}", lines.join("\n"));
    assert!(violations.is_empty(), "{}\n{}", lines.join("\n"), violations.join("\n"));
}

/// The proof the simulator tests something: without syncs it finds stores a power cut breaks.
#[test]
fn without_fsync_a_power_cut_loses_acknowledged_commits() {
    let workload = &workloads("none")[0];
    let violations = sweep(workload, 42, 20).violations;
    assert!(!violations.is_empty(), "store.fsync = none survived every cut: the simulator sees nothing");
}

/// A hand-over (`convo resume`) makes no commit: the session's binding waits in
/// `.git/convo/handovers`, its only copy until the session's first capture. Once `resume`
/// has returned, every state a power cut can leave holds it whole; with `store.fsync =
/// "none"` some lose it (the proof this test sees anything), and the session's first capture
/// would then import its history as a new conversation.
#[test]
fn an_acknowledged_hand_over_survives_a_power_cut() {
    for (fsync, durable) in [("committed", true), ("none", false)] {
        let env = TestEnv::new();
        let config = env.home().join(".config/convo");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(config.join("config.toml"), format!("[store]\nfsync = \"{fsync}\"\n")).unwrap();
        env.new_conversation("handed over");
        env.run(&["append", "--user", "carry this on"]).ok();
        let project = env.root.join("project");
        std::fs::create_dir_all(&project).unwrap();
        let mut command = env.command(&["resume", "--in", "codex"]);
        command.current_dir(&project);
        let trace = Trace::record(&env, command, "");
        let path = env.store.join(".git/convo/handovers");
        let written = std::fs::read(&path).unwrap();
        assert!(!written.is_empty(), "resume kept no hand-over");
        let mut lost = 0;
        let states = 40;
        for index in 0..states {
            let mut rng = Rng::new(7 ^ (index as u64).wrapping_mul(0x1000_0000_01b3));
            // Cut after the command returned: it had acknowledged the hand-over.
            let (files, _) = trace.state(trace.ops.len(), &mut rng);
            if files.get(&path) != Some(&written) {
                lost += 1;
            }
        }
        if durable {
            assert_eq!(lost, 0, "store.fsync = {fsync}: {lost} of {states} power cuts lost an acknowledged hand-over");
        } else {
            assert!(lost > 0, "store.fsync = {fsync}: no power cut lost the hand-over: the model sees nothing");
        }
    }
}

/// A sync the disk fails (EIO) fails the command, with the store as it was: the branch
/// where it was, no event recorded, `fsck` and `git fsck` clean, the working tree and index
/// HEAD's. Never "retry and trust": after a failed fsync the kernel may have dropped the
/// pages it could not write. The fault is real, in the real binary: strace makes the chosen
/// call return EIO. Early (the first `fsync`, the first `fdatasync`: the barrier before the
/// ref moves) and late: the ref's lock file, and then the ref's folder and the reflog, synced
/// after the rename that moved the branch, so the commit's objects are all written and the
/// branch has already moved once. Chosen by path (`-P`), not by count (`when=N`): strace
/// counts each thread's calls, and the barrier syncs from several threads.
#[test]
fn a_sync_the_disk_fails_fails_the_command_and_moves_nothing() {
    let env = TestEnv::new();
    env.new_conversation("disk");
    env.run(&["append", "--user", "kept"]).ok();
    let git = env.store.join(".git");
    let path = |p: &str| git.join(p).to_string_lossy().into_owned();
    let faults: Vec<(&str, Option<String>, &str)> = vec![
        ("fsync", None, "the first folder synced"),
        ("fdatasync", None, "the first file synced"),
        ("fdatasync", Some(path("refs/heads/main.lock")), "the new ref's lock file"),
        ("fsync", Some(path("refs/heads")), "the ref's folder, after the rename"),
        ("fdatasync", Some(path("logs/HEAD")), "HEAD's reflog, after the rename"),
    ];
    for (call, only, what) in faults {
        let head = env.git(&["rev-parse", "HEAD"]);
        let text = format!("lost to a failed {call} of {what}");
        let mut args: Vec<std::ffi::OsString> = vec!["-f".into(), "-qq".into(), "-o".into(), "/dev/null".into()];
        if let Some(only) = &only {
            args.extend(["-P".into(), only.into()]);
        }
        args.extend([
            "-e".into(),
            format!("trace={call}").into(),
            "-e".into(),
            format!("inject={call}:error=EIO").into(),
        ]);
        let run = crate::common::run_command(under_strace(&env.command(&["append", "--user", &text]), &args), "");
        let stderr = run.stderr.replace(env.store.to_str().unwrap(), "[STORE]");
        assert_ne!(run.code, 0, "{what}: the append succeeded on a disk that failed:\n{stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert!(
            lines.len() == 2
                && lines[0].starts_with("error: could not sync [STORE]/.git/")
                && lines[0].ends_with("to disk: Input/output error (os error 5)")
                && lines[1].starts_with("hint: "),
            "{what}: not a one-line error naming what failed, with a hint:\n{stderr}"
        );
        if let Some(only) = &only {
            let only = only.replace(env.store.to_str().unwrap(), "[STORE]");
            assert!(lines[0].contains(&format!("sync {only} ")), "{what}: names another path:\n{stderr}");
        }
        assert_eq!(env.git(&["rev-parse", "HEAD"]), head, "{what}: the branch moved, the command failed");
        let fsck = env.run(&["fsck"]);
        assert_eq!(fsck.code, 0, "{what}: fsck after the failed sync:\n{}{}", fsck.stdout, fsck.stderr);
        // `env.git` asserts that git succeeded.
        env.git(&["fsck", "--full", "--no-dangling", "--no-progress"]);
        assert_eq!(env.git(&["status", "--porcelain"]), "", "{what}: the working tree or index moved");
        let shown = env.run(&["show"]).stdout;
        assert!(!shown.contains(&text) && shown.contains("kept"), "{what}: the events after the failure:\n{shown}");
    }
    // The store still takes appends.
    assert_eq!(env.run(&["append", "--user", "after the faults"]).code, 0);
}

/// The bigger sweep: `cargo test --test cli crash_states_sweep -- --ignored --nocapture`.
#[test]
#[ignore]
fn crash_states_sweep() {
    for fsync in ["committed", "none"] {
        let states = std::env::var("CONVO_CRASH_STATES").ok().and_then(|s| s.parse().ok()).unwrap_or(3000);
        let (lines, violations) = run_all(fsync, states, false);
        eprintln!("store.fsync = {fsync}\n{}", lines.join("\n"));
        for v in violations.iter().take(5) {
            eprintln!("{v}");
        }
    }
}

/// States per workload in the suite (`CONVO_CRASH_STATES` to change it).
fn states() -> usize {
    std::env::var("CONVO_CRASH_STATES").ok().and_then(|s| s.parse().ok()).unwrap_or(8)
}

fn remove_locks(dir: &Path) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            remove_locks(&path);
        } else if path.extension().is_some_and(|e| e == "lock") && !path.ends_with(".git/convo/lock") {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// A clone said done survives a power cut: git syncs the files it writes but none of the
/// names, so convo syncs every folder of the new repository, the store's own and the one
/// holding it (and nothing with `store.fsync = "none"`). Recorded with strace: which paths
/// were synced while the real `convo clone` ran.
#[test]
fn a_clone_said_done_has_every_name_of_its_repository_on_disk() {
    let env = TestEnv::new();
    shared(&env);
    let hub = env.root.join("hub.git");
    for (setting, durable) in [("committed", true), ("none", false)] {
        let config = env.home().join(".config/convo");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(config.join("config.toml"), format!("[store]\nfsync = \"{setting}\"\n")).unwrap();
        let target = env.root.join(format!("clone-{setting}"));
        let log = env.root.join(format!("clone-{setting}.strace"));
        let args: Vec<std::ffi::OsString> =
            ["-f", "-qq", "-y", "-o", log.to_str().unwrap(), "-e", "trace=fsync,fdatasync"]
                .iter()
                .map(Into::into)
                .collect();
        let command = env.command(&["clone", hub.to_str().unwrap(), target.to_str().unwrap()]);
        let run = crate::common::run_command(under_strace(&command, &args), "");
        assert_eq!(run.code, 0, "{}", run.stderr);
        let trace = std::fs::read_to_string(&log).unwrap();
        let synced: BTreeSet<PathBuf> = trace
            .lines()
            // `fsync(3</path>) = 0`, or `fsync(3</path> <unfinished ...>` where threads overlap.
            .filter(|l| l.contains("fsync(") || l.contains("fdatasync("))
            .filter_map(|l| Some(PathBuf::from(l.split_once('<')?.1.split_once('>')?.0)))
            .collect();
        let git = target.join(".git");
        let packs: Vec<PathBuf> =
            std::fs::read_dir(git.join("objects/pack")).unwrap().flatten().map(|e| e.path()).collect();
        let wanted: Vec<PathBuf> = [
            env.root.clone(),
            target.clone(),
            git.clone(),
            git.join("objects"),
            git.join("objects/pack"),
            git.join("refs"),
            git.join("refs/heads"),
            git.join("refs/remotes/origin"),
        ]
        .into_iter()
        .chain(packs)
        .collect();
        for path in &wanted {
            if durable {
                assert!(synced.contains(path), "{setting}: {} not synced; synced: {synced:#?}", path.display());
            } else {
                assert!(!synced.iter().any(|p| p.starts_with(&target) && p.is_dir()), "{setting}: a folder was synced");
            }
        }
    }
}
