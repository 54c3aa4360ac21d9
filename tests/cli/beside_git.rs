//! convo and git in one repository: a `git gc` beside convo's writes (a user's, `git
//! maintenance`, convo's own) must never make a write fail, a lock a killed git left must not
//! stop later writes or gcs, and a lock a live git holds is waited for, never deleted.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::{FakeGit, TestEnv, conversation_dir, run_command};

fn git_in(store: &Path) -> Command {
    let mut git = Command::new("git");
    git.current_dir(store).env("GIT_CONFIG_NOSYSTEM", "1").env("GIT_CONFIG_GLOBAL", "/dev/null");
    git
}

/// The branch HEAD names, e.g. `refs/heads/main`.
fn branch(env: &TestEnv) -> String {
    env.git(&["symbolic-ref", "HEAD"]).trim().to_owned()
}

/// Pids of processes whose name starts with `git` working in `store` (by their folder).
fn git_processes_in(store: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let comm = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
        let cwd = std::fs::read_link(entry.path().join("cwd")).unwrap_or_default();
        if comm.starts_with("git") && cwd.starts_with(store) {
            found.push(format!("{name} {}", comm.trim()));
        }
    }
    found
}

/// Poll `done` until it holds; a generous deadline, so a loaded machine is only slower.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "still not so after 30 s: {what}");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Whether some process holds convo's write lock (`.git/convo/lock`, an flock).
fn convo_lock_held(env: &TestEnv) -> bool {
    let Ok(file) = std::fs::File::open(env.store.join(".git/convo/lock")) else { return false };
    matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock))
}

/// Whether the process `strace` (pid `strace`) runs is stopped in an `openat` that creates
/// a lock file (`O_CREAT | O_EXCL`): with `-P LOCK -e inject=openat:delay_enter=…`, strace
/// holds it there. /proc/PID/syscall gives the call's number and its arguments, flags third.
fn held_at_lock_open(strace: u32) -> bool {
    let children = std::fs::read_to_string(format!("/proc/{strace}/task/{strace}/children")).unwrap_or_default();
    children.split_whitespace().any(|pid| {
        let syscall = std::fs::read_to_string(format!("/proc/{pid}/syscall")).unwrap_or_default();
        let mut fields = syscall.split_whitespace();
        let number = fields.next().and_then(|n| n.parse::<i64>().ok());
        let flags = fields.nth(2).and_then(|f| i64::from_str_radix(f.trim_start_matches("0x"), 16).ok());
        number == Some(libc::SYS_openat) && flags.is_some_and(|f| f & i64::from(libc::O_EXCL) != 0)
    })
}

/// 3,000 loose objects and `gc.auto` 256: the next convo commit runs `git gc --auto`.
fn due_for_gc(env: &TestEnv) {
    let blobs = env.root.join("blobs");
    std::fs::create_dir_all(&blobs).unwrap();
    let paths: String = (0..3000)
        .map(|i| {
            let path = blobs.join(i.to_string());
            std::fs::write(&path, format!("loose object {i}\n")).unwrap();
            format!("{}\n", path.display())
        })
        .collect();
    let mut hash = git_in(&env.store);
    hash.args(["hash-object", "-w", "--stdin-paths"]);
    run_command(hash, &paths).ok();
    env.git(&["config", "gc.auto", "256"]);
}

fn in_pack(env: &TestEnv) -> u64 {
    let counts = env.git(&["count-objects", "-v"]);
    counts.lines().find_map(|l| l.strip_prefix("in-pack: ")).unwrap().parse().unwrap()
}

#[test]
fn appends_land_while_git_gc_runs_in_a_loop_beside_them() {
    let env = TestEnv::new();
    env.new_conversation("beside gc");
    let stop = env.root.join("stop-gc");
    let mut looping = Command::new("sh")
        .args(["-c", "while [ ! -e \"$1\" ]; do git gc -q >/dev/null 2>&1; done", "sh"])
        .arg(&stop)
        .current_dir(&env.store)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut failed = Vec::new();
    for n in 0..150 {
        let out = env.run(&["append", "--user", &format!("turn {n}")]);
        if out.code != 0 {
            failed.push(format!("turn {n}: {}", out.stderr.trim()));
        }
    }
    std::fs::write(&stop, "").unwrap();
    looping.wait().unwrap();
    assert!(failed.is_empty(), "{} of 150 appends failed beside `git gc`:\n{}", failed.len(), failed.join("\n"));
    let shown = env.run(&["show", "--format", "jsonl"]).ok().lines().count();
    assert_eq!(shown, 150);
    env.run(&["fsck"]).ok();
    assert_eq!(env.git_status(), "");
}

#[test]
fn a_stale_git_lock_is_reported_then_cleared_and_gc_packs_again() {
    let env = TestEnv::new();
    env.new_conversation("locked out");
    env.run(&["append", "--user", "before"]).ok();
    due_for_gc(&env);
    // What a `git gc` killed in its reflog and pack-refs steps leaves behind.
    for lock in ["HEAD.lock", "packed-refs.lock"] {
        let path = env.store.join(".git").join(lock);
        std::fs::write(&path, "").unwrap();
        // Left an hour ago: convo takes over only locks older than its look at `/proc`.
        let mut touch = Command::new("touch");
        touch.args(["-d", "1 hour ago"]).arg(&path);
        assert!(touch.status().unwrap().success());
    }
    let mut gc = git_in(&env.store);
    gc.args(["gc", "-q"]).stdout(Stdio::null()).stderr(Stdio::null());
    assert!(!gc.status().unwrap().success(), "git gc fails while the locks are there");

    let out = env.run(&["fsck"]);
    let seconds = regex::Regex::new(r"\(\d+s old").unwrap();
    let shown = seconds.replace_all(&env.transcript(&out), "(Ns old").into_owned();
    insta::assert_snapshot!(shown, @r"
    exit 1
    --- stdout
    .git/HEAD.lock: stale git lock (Ns old, no git runs in the store): it makes `git gc` fail; the next convo write removes it, or run `rm [ROOT]/store/.git/HEAD.lock`
    .git/objects: about 4096 loose objects need packing (gc.auto is 256), and `git gc` fails while .git/HEAD.lock exists
    .git/packed-refs.lock: stale git lock (Ns old, no git runs in the store): it makes `git gc` fail; the next convo write removes it, or run `rm [ROOT]/store/.git/packed-refs.lock`
    --- stderr
    error: 3 problems found
    ");

    // The next write takes them over, and its automatic gc packs.
    env.run(&["append", "--user", "after"]).ok();
    assert!(!env.store.join(".git/HEAD.lock").exists() && !env.store.join(".git/packed-refs.lock").exists());
    assert!(in_pack(&env) > 0, "convo's gc packed");
    env.run(&["fsck"]).ok();
    env.git(&["gc", "-q"]);
}

#[test]
fn a_convo_killed_during_its_gc_leaves_nothing_that_blocks_the_next_append() {
    let env = TestEnv::new();
    env.new_conversation("killed in gc");
    env.run(&["append", "--user", "before"]).ok();
    due_for_gc(&env);
    let mut cmd = env.command(&["append", "--user", "the commit lands, then gc starts"]);
    cmd.env("CONVO_TEST_FAIL_AT", "gc");
    let out = run_command(cmd, "");
    assert_ne!(out.code, 0, "the process should have died");
    assert!(env.store.join(".git/convo/gc").exists(), "the gc was recorded while it ran");

    // At once: no waiting for anything the dead gc left.
    env.run(&["append", "--user", "right after"]).ok();
    assert!(!env.store.join(".git/convo/gc").exists());
    assert_eq!(git_processes_in(&env.store), Vec::<String>::new(), "no git left working in the store");
    let shown = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    assert_eq!(shown.lines().count(), 3, "{shown}");
    env.run(&["fsck"]).ok();
    env.git(&["gc", "-q"]);
}

#[test]
fn a_branch_lock_a_live_git_holds_is_waited_for_and_never_deleted() {
    let env = TestEnv::new();
    env.new_conversation("waiting");
    env.run(&["append", "--user", "before"]).ok();
    let lock = env.store.join(".git").join(format!("{}.lock", branch(&env)));

    // Held, then released: the append waits and lands. Released only once the append holds
    // convo's lock, from where nothing but the branch's lock stands between it and its commit.
    let holder = FakeGit::start(&env, "30");
    std::fs::write(&lock, "").unwrap();
    let mut append = env.command(&["append", "--user", "after the wait"]);
    let mut append = append.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    wait_until("the append took convo's lock", || convo_lock_held(&env));
    assert!(append.try_wait().unwrap().is_none(), "the append did not wait for git's lock");
    std::fs::remove_file(&lock).unwrap();
    let out = append.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // Held past the wait: refused, the lock left alone, nothing written.
    env.git(&["config", "core.filesRefLockTimeout", "300"]);
    std::fs::write(&lock, "").unwrap();
    let before = env.snapshot();
    let out = env.run(&["append", "--user", "never lands"]);
    let pid = regex::Regex::new(r"pid \d+").unwrap();
    let shown = pid.replace_all(&env.transcript(&out), "pid N").into_owned();
    insta::assert_snapshot!(shown, @r"
    exit 5
    --- stderr
    error: .git/refs/heads/main.lock is held by git (pid N), still after 300 ms
    hint: nothing was written; try again when that git command is done (git's `core.filesRefLockTimeout`, in ms, sets how long convo waits)
    ");
    assert!(lock.exists(), "a lock a live git may hold is never deleted");
    assert_eq!(env.snapshot(), before);

    // Once no git runs, the same lock is stale: the next write takes it over.
    drop(holder);
    env.run(&["append", "--user", "after the holder died"]).ok();
    assert!(!lock.exists());
    let shown = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    assert_eq!(shown.lines().count(), 3, "{shown}");
    env.run(&["fsck"]).ok();
}

/// An append patches the git index in place; an index git rewrote with an extension convo
/// does not keep up (the cache tree `git write-tree` adds) is written whole instead. Either
/// way git sees a clean store, and its fsck and `diff --cached` agree with HEAD.
#[test]
fn the_git_index_is_patched_in_place_or_written_whole_and_git_agrees() {
    let env = TestEnv::new();
    let id = env.new_conversation("index");
    env.run(&["append", &id, "--user", "first"]).ok();
    let index = env.store.join(".git/index");
    // The second append changes only a file the index has an entry for.
    let before = index_checksum(&env);
    env.run(&["append", &id, "--user", "second"]).ok();
    assert_ne!(index_checksum(&env), before, "patched, with its own checksum");
    let clean = |env: &TestEnv, when: &str| {
        assert_eq!(env.git_status(), "", "{when}");
        assert_eq!(env.git(&["diff", "--cached", "--name-only"]), "", "{when}");
        env.git(&["fsck", "--no-progress"]);
        env.run(&["fsck"]).ok();
    };
    clean(&env, "after the patch");
    // git adds its cache tree to the index: the next append must not leave it stale.
    let out = git_in(&env.store).arg("write-tree").output().unwrap();
    assert!(out.status.success());
    let with_tree = std::fs::read(&index).unwrap();
    assert!(with_tree.windows(4).any(|w| w == b"TREE"), "git wrote its cache tree");
    env.run(&["append", &id, "--user", "third"]).ok();
    assert!(!std::fs::read(&index).unwrap().windows(4).any(|w| w == b"TREE"), "the stale cache tree is gone");
    clean(&env, "after the whole write");
    env.run(&["append", &id, "--user", "fourth"]).ok();
    clean(&env, "after a patch again");
    // The index git reads holds every event.
    let shown = env.git(&["show", &format!(":{}/events/0000/000000.jsonl", conversation_dir(&id))]);
    assert_eq!(shown.lines().count(), 4);
}

/// The checksum that ends `.git/index`, checked to be the SHA-1 of what precedes it. A git
/// that read the index compares it before writing back what it refreshed: were it null, or
/// unchanged by a write, that git would overwrite convo's newer index with its stale view.
fn index_checksum(env: &TestEnv) -> Vec<u8> {
    let index = std::fs::read(env.store.join(".git/index")).unwrap();
    let (body, checksum) = index.split_at(index.len() - 20);
    let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
    hasher.update(body);
    assert_eq!(hasher.try_finalize().unwrap().as_slice(), checksum, "the index ends with its own SHA-1");
    checksum.to_vec()
}

/// The shared index `.git/index` links to, when it is split: the file must exist.
fn linked_shared_index(env: &TestEnv) -> Option<String> {
    let index = std::fs::read(env.store.join(".git/index")).unwrap();
    let body = &index[..index.len() - 20];
    let at = body.windows(4).rposition(|w| w == b"link")?;
    let hex: String = body[at + 8..at + 28].iter().map(|b| format!("{b:02x}")).collect();
    let name = format!("sharedindex.{hex}");
    assert!(env.store.join(".git").join(&name).exists(), "{name} is linked but missing");
    Some(name)
}

fn shared_indexes(env: &TestEnv) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(env.store.join(".git"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("sharedindex."))
        .collect();
    names.sort();
    names
}

/// Every path of HEAD in the index with HEAD's blob, and git sees no change.
fn index_matches_head(env: &TestEnv, when: &str) {
    let tree: Vec<String> = env
        .git(&["ls-tree", "-r", "HEAD"])
        .lines()
        .map(|l| {
            let (meta, path) = l.split_once('\t').unwrap();
            let mut meta = meta.split(' ');
            format!("{} {} 0\t{path}", meta.next().unwrap(), meta.nth(1).unwrap())
        })
        .collect();
    let index: Vec<String> = env.git(&["ls-files", "-s"]).lines().map(str::to_owned).collect();
    assert_eq!(index, tree, "{when}");
    assert_eq!(env.git_status(), "", "{when}");
}

/// With git's `core.splitIndex` (or, unset, in a big store), an append writes only what
/// changed into `.git/index` and links a shared index for the rest; git reads the pair as
/// the whole index. At `splitIndex.maxPercentChange` the two merge into a new shared index
/// and older ones go. `core.splitIndex false` un-splits it, and a lost shared index costs a
/// rebuild, not the append.
#[test]
fn appends_split_the_git_index_as_core_split_index_says_and_git_agrees() {
    let env = TestEnv::new();
    let a = env.new_conversation("split a");
    let b = env.new_conversation("split b");
    let long = "words of a long turn ".repeat(300);
    env.run(&["append", &a, "--user", &long]).ok();
    assert!(linked_shared_index(&env).is_none() && shared_indexes(&env).is_empty(), "a small store is not split");

    env.git(&["config", "core.splitIndex", "true"]);
    // Never merged: the split index gathers every change (rewritten and new segments).
    env.git(&["config", "splitIndex.maxPercentChange", "100"]);
    for n in 0..8 {
        let id = if n % 3 == 2 { &b } else { &a };
        let before = index_checksum(&env);
        env.run(&["append", id, "--user", &format!("{n} {long}")]).ok();
        assert_ne!(index_checksum(&env), before, "append {n}: a new checksum");
        index_matches_head(&env, &format!("split, append {n}"));
        assert!(linked_shared_index(&env).is_some(), "append {n} left the index split");
    }
    assert_eq!(shared_indexes(&env).len(), 1, "one shared index all along");
    assert!(env.git(&["ls-files"]).lines().any(|p| p.ends_with("000002.jsonl")), "segments were added");

    // Merged as soon as anything changes: a new shared index each time, and at most the
    // one before it kept (a reader of the index just replaced may still open it).
    env.git(&["config", "splitIndex.maxPercentChange", "0"]);
    let mut made = shared_indexes(&env);
    for n in 0..3 {
        let before = linked_shared_index(&env).unwrap();
        let checksum = index_checksum(&env);
        env.run(&["append", &a, "--user", &format!("merged {n}")]).ok();
        assert_ne!(index_checksum(&env), checksum);
        let now = linked_shared_index(&env).unwrap();
        assert_ne!(now, before, "a new shared index");
        made.push(now);
        made.sort();
        // Unused ones are kept for `splitIndex.sharedIndexExpire` (two weeks), as git keeps
        // them for a git that read the index before, or another index file.
        assert_eq!(shared_indexes(&env), made);
        index_matches_head(&env, &format!("merged, append {n}"));
    }
    // Expired at once: only the one in use is left after the next merge. One in use is
    // kept fresh by every append that writes a split index over it.
    env.git(&["config", "splitIndex.sharedIndexExpire", "now"]);
    env.run(&["append", &a, "--user", "expired"]).ok();
    assert_eq!(shared_indexes(&env), vec![linked_shared_index(&env).unwrap()]);
    env.git(&["fsck", "--no-progress"]);
    env.run(&["fsck"]).ok();

    // A shared index lost: the append lands, and the index is rebuilt from HEAD.
    env.git(&["config", "--unset", "splitIndex.maxPercentChange"]);
    for name in shared_indexes(&env) {
        std::fs::remove_file(env.store.join(".git").join(name)).unwrap();
    }
    env.run(&["append", &b, "--user", "after the loss"]).ok();
    index_matches_head(&env, "after the loss");
    env.run(&["append", &b, "--user", "split again"]).ok();
    assert!(linked_shared_index(&env).is_some());
    index_matches_head(&env, "split again");

    // git's own split index, with its cache tree beside the link: written whole.
    env.git(&["update-index", "--split-index"]);
    env.run(&["append", &a, "--user", "after git's split"]).ok();
    index_matches_head(&env, "after git's split");

    // Turned off: the next append writes the whole index.
    env.git(&["config", "core.splitIndex", "false"]);
    env.run(&["append", &a, "--user", "unsplit"]).ok();
    assert!(linked_shared_index(&env).is_none(), "core.splitIndex false un-splits");
    index_matches_head(&env, "unsplit");
    let shown = env.run(&["show", &a, "--format", "jsonl"]).ok().lines().count();
    assert_eq!(shown, 1 + 6 + 3 + 3);
}

/// A git that read the index before an append (`git status`, held by strace just before it
/// takes `index.lock` to write back what it refreshed) must not then write its stale view
/// over convo's newer index: git compares the checksum it read with the file's, so every
/// index convo writes carries its own (a null one, git's "not computed", matched anything).
/// Both shapes: the whole index patched, and a split one.
#[test]
fn a_git_status_that_read_the_index_before_an_append_does_not_write_over_it() {
    for split in [false, true] {
        let env = TestEnv::new();
        let id = env.new_conversation("raced");
        if split {
            env.git(&["config", "core.splitIndex", "true"]);
        }
        env.run(&["append", &id, "--user", "first"]).ok();
        env.run(&["append", &id, "--user", "second"]).ok();
        // The segment's stat no longer what the index holds (its bytes are): git's refresh
        // updates the entry, and so writes the index back.
        let segment = env.store.join(conversation_dir(&id)).join("events/0000/000000.jsonl");
        let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::options().write(true).open(&segment).unwrap().set_modified(an_hour_ago).unwrap();
        let lock = env.store.join(".git/index.lock");
        let mut status = Command::new("strace");
        status
            .args(["-f", "-o", "/dev/null", "-e", "inject=openat:delay_enter=2000000", "-P"])
            .arg(&lock)
            .args(["git", "status", "--porcelain"])
            .current_dir(&env.store)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let started = std::time::Instant::now();
        let mut status = status.spawn().expect("strace runs (.ci/test installs it)");
        // git reads the index and refreshes it, then is held two seconds taking the lock.
        let strace = status.id();
        wait_until("git held at index.lock", || {
            assert!(status.try_wait().unwrap().is_none(), "git finished before it was seen at its lock");
            held_at_lock_open(strace)
        });
        env.run(&["append", &id, "--user", "while git waits"]).ok();
        assert!(status.wait().unwrap().success());
        assert!(started.elapsed() >= std::time::Duration::from_secs(2), "git was held at its lock");
        index_matches_head(&env, if split { "split" } else { "whole" });
        env.run(&["fsck"]).ok();
    }
}

/// The index is derived from HEAD. Deleted, it used to be started empty by the next write,
/// which then held only that commit's paths: `git status` showed every other file as
/// deleted, and a `git commit` in the store would have deleted them.
#[test]
fn a_deleted_index_is_rebuilt_whole_by_the_next_write_and_fsck_says_how_to_mend_one() {
    let env = TestEnv::new();
    let a = env.new_conversation("kept a");
    let b = env.new_conversation("kept b");
    env.run(&["append", &a, "--user", "first"]).ok();
    env.run(&["append", &b, "--user", "second"]).ok();

    std::fs::remove_file(env.store.join(".git/index")).unwrap();
    let fsck = env.run(&["fsck"]);
    insta::assert_snapshot!(env.transcript(&fsck), @r"
    exit 1
    --- stdout
    .git/index: missing; the next convo write rebuilds it
    --- stderr
    error: 1 problem found
    hint: the index is git's copy of HEAD's file list, nothing of its own: `git reset --quiet` in the store rebuilds it
    ");
    env.run(&["append", &a, "--user", "after the loss"]).ok();
    index_matches_head(&env, "after a write without an index");
    env.run(&["fsck"]).ok();

    // Entries lost some other way are not a write's to find; fsck names them and the mend.
    env.git(&["rm", "--cached", "--quiet", "-r", "conversations"]);
    let fsck = env.run(&["fsck"]);
    assert_eq!(fsck.code, 1);
    assert!(fsck.stdout.lines().all(|l| l.ends_with(": in HEAD but not in the index")), "{}", fsck.stdout);
    assert!(fsck.stderr.contains("`git reset --quiet` in the store rebuilds it"), "{}", fsck.stderr);
    env.git(&["reset", "--quiet"]);
    index_matches_head(&env, "after git reset");
    env.run(&["fsck"]).ok();

    // Files changed by hand: the mend names exactly the top-level paths that need it.
    env.run(&["config", "set", "--layer", "store", "compaction.keep_last", "5"]).ok();
    let config = env.store.join("convo.toml");
    let edited = format!("{}# by hand\n", std::fs::read_to_string(&config).unwrap());
    std::fs::write(&config, edited).unwrap();
    std::fs::remove_file(env.store.join(format!("{}/meta.json", conversation_dir(&b)))).unwrap();
    let fsck = env.run(&["fsck"]);
    assert_eq!(fsck.code, 1);
    assert!(
        fsck.stderr.contains("hint: `git checkout HEAD -- conversations convo.toml` in the store restores"),
        "{}",
        fsck.stderr
    );
    assert!(!fsck.stderr.contains("git reset"), "{}", fsck.stderr);
    env.git(&["checkout", "HEAD", "--", "conversations", "convo.toml"]);
    env.run(&["fsck"]).ok();
}
