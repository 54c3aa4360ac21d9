//! The hub at team scale (issue 43, `store::hub`): a push publishes, besides the branch, one
//! ref per conversation holding that conversation alone and a catalog listing them; a
//! fetch brings the catalog back through the quarantine; the next push publishes only what
//! changed; hubs an older convo pushed to gain the refs; a hostile catalog is refused.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::githttp::Daemon;
use crate::common::{TestEnv, TwoPeople, bare, conversation_dir, two_people};
use crate::hostile_remotes::{blob, git_in, git_str, write_tree};

/// Every ref of the hub: name → commit.
fn refs(hub: &Path) -> BTreeMap<String, String> {
    git_str(hub, &["for-each-ref", "--format=%(refname) %(objectname)"])
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(name, id)| (name.to_owned(), id.to_owned()))
        .collect()
}

/// `path blob` of every file of a commit (or below `path` in it).
fn files(repo: &Path, commit: &str) -> BTreeMap<String, String> {
    git_str(repo, &["ls-tree", "-r", commit])
        .lines()
        .map(|l| {
            let (head, path) = l.split_once('\t').unwrap();
            (path.to_owned(), head.split(' ').nth(2).unwrap().to_owned())
        })
        .collect()
}

/// The catalog's lines, by id.
fn catalog(hub: &Path) -> BTreeMap<String, serde_json::Value> {
    let mut out = BTreeMap::new();
    // Its fan files; `branch.commit` and `branch.tree` copy the branch (see `lazy_push.rs`).
    for (path, _) in files(hub, "refs/convo/catalog").into_iter().filter(|(path, _)| path.ends_with(".jsonl")) {
        for line in git_str(hub, &["show", &format!("refs/convo/catalog:{path}")]).lines() {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            out.insert(value["id"].as_str().unwrap().to_owned(), value);
        }
    }
    out
}

#[test]
fn a_push_publishes_each_conversation_alone_and_a_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let daemon = Daemon::start(dir.path());
    let a = TestEnv::new();
    let first = a.new_conversation("first");
    a.run(&["append", "--user", "one"]).ok();
    let second = a.new_conversation("second");
    a.run(&["append", "--user", "two"]).ok();
    a.run(&["append", "--assistant", "three"]).ok();
    a.run(&["remote", "add", "origin", &format!("{}/hub.git", daemon.url)]).ok();
    a.run(&["push"]).ok();

    let refs = refs(&hub);
    let main = &refs["refs/heads/main"];
    let branch = files(&hub, main);
    for id in [&first, &second] {
        let tip = &refs[&format!("refs/convo/conversations/{id}")];
        let alone = files(&hub, tip);
        assert!(!alone.is_empty());
        // That conversation's files, the very blobs the branch holds, and nothing else.
        for (path, blob) in &alone {
            assert!(path.starts_with(&format!("{}/", conversation_dir(id))), "{path}");
            assert_eq!(branch.get(path), Some(blob), "{path}");
        }
        assert_eq!(alone.len(), branch.keys().filter(|p| p.starts_with(&conversation_dir(id))).count());
        assert_eq!(git_str(&hub, &["rev-list", "--count", tip]), "1", "a snapshot, without a line behind it");
    }
    let listed = catalog(&hub);
    assert_eq!(listed.len(), 2);
    let line = &listed[&second];
    assert_eq!(line["title"], "second");
    assert_eq!(line["events"], 2);
    assert_eq!(line["tip"].as_str().unwrap(), refs[&format!("refs/convo/conversations/{second}")]);
    assert_eq!(
        line["tree"].as_str().unwrap(),
        git_str(&hub, &["rev-parse", &format!("{main}:{}", conversation_dir(&second))])
    );
    let message = git_str(&hub, &["log", "-1", "--format=%B", "refs/convo/catalog"]);
    assert!(message.contains(&format!("Convo-Branch: {main}")), "{message}");
    // The pusher keeps what it published, for the next push to start from.
    assert_eq!(a.git(&["rev-parse", "refs/convo/remotes/origin/catalog"]).trim(), refs["refs/convo/catalog"]);
}

#[test]
fn a_teammates_push_publishes_only_the_conversation_it_changed() {
    let TwoPeople { a, b, hub, url, served: _served } = two_people();
    let kept = a.new_conversation("kept");
    a.run(&["append", "--user", "one"]).ok();
    let grown = a.new_conversation("grown");
    a.run(&["append", "--user", "two"]).ok();
    let gone = a.new_conversation("gone");
    a.run(&["append", "--user", "three"]).ok();
    a.run(&["remote", "add", "origin", &url]).ok();
    a.run(&["push"]).ok();
    let before = refs(&hub);

    // A clone brings the catalog through the quarantine.
    b.run(&["clone", &url, b.store.to_str().unwrap()]).ok();
    assert_eq!(b.git(&["rev-parse", "refs/convo/remotes/origin/catalog"]).trim(), before["refs/convo/catalog"]);
    b.run(&["switch", &grown]).ok();
    b.run(&["append", "--user", "more"]).ok();
    b.run(&["rm", &gone]).ok();
    b.run(&["push"]).ok();

    let after = refs(&hub);
    let at = |refs: &BTreeMap<String, String>, id: &str| refs.get(&format!("refs/convo/conversations/{id}")).cloned();
    assert_eq!(at(&after, &kept), at(&before, &kept), "an unchanged conversation's ref does not move");
    assert_ne!(at(&after, &grown), at(&before, &grown));
    assert_eq!(at(&after, &gone), None, "a removed conversation's ref goes");
    let listed = catalog(&hub);
    assert_eq!(listed.keys().cloned().collect::<Vec<_>>(), {
        let mut ids = vec![kept.clone(), grown.clone()];
        ids.sort();
        ids
    });
    assert_eq!(listed[&grown]["events"], 2);
    assert_eq!(listed[&grown]["tip"].as_str(), at(&after, &grown).as_deref());
    // Its parents are the branch commit it describes and the catalog before it, so git
    // sends only the catalog files that changed.
    let parents = git_str(&hub, &["log", "-1", "--format=%P", "refs/convo/catalog"]);
    assert_eq!(parents, format!("{} {}", after["refs/heads/main"], before["refs/convo/catalog"]));

    // A pull brings the new catalog back to the first pusher.
    a.run(&["pull"]).ok();
    assert_eq!(a.git(&["rev-parse", "refs/convo/remotes/origin/catalog"]).trim(), after["refs/convo/catalog"]);
    for env in [&a, &b] {
        env.run(&["fsck"]).ok();
        assert_eq!(env.git_status(), "");
    }
}

#[test]
fn a_hub_an_older_convo_pushed_to_gains_the_refs_on_the_next_push() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let a = TestEnv::new();
    let first = a.new_conversation("first");
    a.run(&["append", "--user", "one"]).ok();
    a.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    // What an older convo did: the branch alone.
    a.git(&["push", "--quiet", "origin", "HEAD:refs/heads/main"]);
    assert!(!refs(&hub).keys().any(|r| r.starts_with("refs/convo/")));

    // It still clones and pulls (no catalog is no error).
    let b = TestEnv::bare_at(100);
    b.run(&["clone", hub.to_str().unwrap(), b.store.to_str().unwrap()]).ok();
    b.run(&["pull"]).ok();
    assert!(b.git(&["for-each-ref", "refs/convo/"]).trim().is_empty());

    a.run(&["push"]).ok();
    let published = refs(&hub);
    assert!(published.contains_key(&format!("refs/convo/conversations/{first}")));
    assert_eq!(catalog(&hub).len(), 1);

    // An older convo pushes again (a new conversation, the branch alone): the catalog no
    // longer describes the branch, and the next push publishes what it lacks.
    b.run(&["pull"]).ok();
    let second = b.new_conversation("second");
    b.run(&["append", "--user", "two"]).ok();
    b.git(&["push", "--quiet", hub.to_str().unwrap(), "HEAD:refs/heads/main"]);
    a.run(&["pull"]).ok();
    a.run(&["push"]).ok();
    let after = refs(&hub);
    assert_eq!(
        after[&format!("refs/convo/conversations/{first}")],
        published[&format!("refs/convo/conversations/{first}")]
    );
    assert!(after.contains_key(&format!("refs/convo/conversations/{second}")));
    let message = git_str(&hub, &["log", "-1", "--format=%B", "refs/convo/catalog"]);
    assert!(message.contains(&format!("Convo-Branch: {}", after["refs/heads/main"])), "{message}");
    // And `git clone` of the hub is still a store.
    let plain = dir.path().join("plain");
    git_in(dir.path(), &["clone", "--quiet", hub.to_str().unwrap(), plain.to_str().unwrap()], b"");
    let c = TestEnv::new();
    let listed = c.command(&["--store", plain.to_str().unwrap(), "list"]).output().unwrap();
    assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
    assert!(String::from_utf8_lossy(&listed.stdout).contains("second"));
}

/// A hub whose catalog is not one convo writes: `name` → the bytes of one file of its tree.
fn plant_catalog(hub: &Path, name: &[u8], data: &[u8]) {
    let blob = blob(hub, data);
    let tree = write_tree(hub, &[("100644".to_owned(), name.to_vec(), blob)]);
    let main = git_str(hub, &["rev-parse", "refs/heads/main"]);
    let commit = git_str(hub, &["commit-tree", &tree, "-m", &format!("convo: catalog\n\nConvo-Branch: {main}")]);
    git_in(hub, &["update-ref", "refs/convo/catalog", &commit], b"");
}

#[test]
fn a_hostile_catalog_is_refused_and_replaced_by_the_next_push() {
    let a = TestEnv::new();
    let id = a.new_conversation("mine");
    a.run(&["append", "--user", "one"]).ok();
    let id_fan = crate::common::fan(&id).to_owned();
    let line = |id: &str| {
        format!(
            r#"{{"id":"{id}","title":"x","project":{{"cwd":null,"branch":null,"remote":null}},"agent":null,"person":null,"created":"c","updated":"u","events":1,"turns":1,"bytes":1,"tree":"{z}","tip":"{z}"}}"#,
            z = "0".repeat(40)
        )
    };
    let cases: Vec<(&str, Vec<u8>, Vec<u8>)> = vec![
        ("a path for a name", b"../../outside.jsonl".to_vec(), line(&id).into_bytes()),
        ("a file that is no fan", b"config".to_vec(), b"[core]\n".to_vec()),
        ("an id with a path in it", format!("{id_fan}.jsonl").into_bytes(), line(&format!("../../{id}")).into_bytes()),
        ("an id in another fan", b"ZZ.jsonl".to_vec(), line(&id).into_bytes()),
        ("a line that is not one", format!("{id_fan}.jsonl").into_bytes(), b"{\"id\": 5}".to_vec()),
    ];
    for (what, name, data) in cases {
        let dir = tempfile::tempdir().unwrap();
        let hub = bare(dir.path(), "hub");
        let b = TestEnv::bare_at(100);
        a.run(&["remote", "add", "hub", hub.to_str().unwrap()]).ok();
        a.run(&["push", "hub"]).ok();
        plant_catalog(&hub, &name, &data);
        b.run(&["clone", hub.to_str().unwrap(), b.store.to_str().unwrap()]).ok();
        assert!(b.git(&["for-each-ref", "refs/convo/"]).trim().is_empty(), "{what}: refused, not kept");
        assert!(!dir.path().join("outside.jsonl").exists() && !b.store.join("../outside.jsonl").exists(), "{what}");
        b.run(&["fsck"]).ok();
        // The next push publishes every conversation again, and a catalog convo writes.
        b.run(&["switch", &id]).ok();
        b.run(&["append", "--user", "two"]).ok();
        b.run(&["push"]).ok();
        let listed = catalog(&hub);
        assert_eq!(listed.keys().collect::<Vec<_>>(), [&id], "{what}");
        assert_eq!(listed[&id]["events"], 2, "{what}");
        a.run(&["remote", "remove", "hub"]).ok();
    }
}

#[test]
fn a_catalog_ref_naming_a_huge_blob_is_refused_without_reading_it() {
    let a = TestEnv::new();
    let id = a.new_conversation("mine");
    a.run(&["append", "--user", "one"]).ok();
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    a.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    a.run(&["push"]).ok();
    let fan = crate::common::fan(&id);
    // 17 MiB of one line: over what a catalog file may be.
    plant_catalog(&hub, format!("{fan}.jsonl").as_bytes(), &vec![b'x'; 17 << 20]);
    let b = TestEnv::bare_at(100);
    b.run(&["clone", hub.to_str().unwrap(), b.store.to_str().unwrap()]).ok();
    assert!(b.git(&["for-each-ref", "refs/convo/"]).trim().is_empty());
    // A ref naming a blob, not a commit.
    let blob = blob(&hub, b"not a commit");
    git_in(&hub, &["update-ref", "refs/convo/catalog", &blob], b"");
    b.run(&["pull"]).ok();
    assert!(b.git(&["for-each-ref", "refs/convo/"]).trim().is_empty());
    // Refused, so the next push publishes a catalog convo writes in its place.
    b.run(&["switch", &id]).ok();
    b.run(&["append", "--user", "two"]).ok();
    b.run(&["push"]).ok();
    assert_eq!(catalog(&hub)[&id]["events"], 2);
}

#[test]
fn a_conversation_convo_cannot_summarise_is_pushed_all_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let a = TestEnv::new();
    let id = a.new_conversation("broken");
    a.run(&["append", "--user", "one"]).ok();
    // Another tool broke its meta.json and committed it.
    let meta = a.store.join(conversation_dir(&id)).join("meta.json");
    std::fs::write(&meta, "not json\n").unwrap();
    a.git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "broken by hand"]);
    a.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    a.run(&["push"]).ok();
    let listed = catalog(&hub);
    assert_eq!(listed[&id]["title"], serde_json::Value::Null);
    assert!(refs(&hub).contains_key(&format!("refs/convo/conversations/{id}")));
}

/// `cmd` run with a `git` first on PATH that logs each call's arguments (one line each) to
/// the returned file, then runs the real git.
fn with_logging_git(env: &TestEnv, mut cmd: std::process::Command) -> (crate::common::Run, Vec<String>) {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var("PATH").unwrap_or_default();
    let real = std::env::split_paths(&path).map(|d| d.join("git")).find(|g| g.is_file()).expect("git on PATH");
    let bin = env.root.join("logging-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = env.root.join("git-calls.log");
    let _ = std::fs::remove_file(&log);
    let script = format!("#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n", log.display(), real.display());
    std::fs::write(bin.join("git"), script).unwrap();
    std::fs::set_permissions(bin.join("git"), std::fs::Permissions::from_mode(0o755)).unwrap();
    cmd.env("PATH", format!("{}:{path}", bin.display()));
    let run = crate::common::run_command(cmd, "");
    let calls = std::fs::read_to_string(&log).unwrap_or_default().lines().map(str::to_owned).collect();
    (run, calls)
}

/// How many of `calls` ran `git fetch` (whatever options came before the subcommand).
fn fetches(calls: &[String]) -> usize {
    calls.iter().filter(|c| c.split(' ').any(|word| word == "fetch")).count()
}

#[test]
fn a_pull_fetches_once_and_a_push_never_fetches_what_it_has() {
    let TwoPeople { a, b, url, served: _served, .. } = two_people();
    let id = a.new_conversation("talk");
    a.run(&["append", "--user", "one"]).ok();
    a.run(&["remote", "add", "origin", &url]).ok();
    a.run(&["push"]).ok();
    b.run(&["clone", &url, b.store.to_str().unwrap()]).ok();
    a.run(&["append", &id, "--user", "two"]).ok();
    a.run(&["push"]).ok();

    // The quarantine's objects are moved into the store, not fetched from it a second time.
    let (pulled, calls) = with_logging_git(&b, b.command(&["pull"]));
    pulled.ok();
    assert_eq!(fetches(&calls), 1, "{calls:#?}");
    b.run(&["append", &id, "--user", "three"]).ok();
    let (pushed, calls) = with_logging_git(&b, b.command(&["push"]));
    pushed.ok();
    assert_eq!(fetches(&calls), 0, "{calls:#?}");
    b.run(&["fsck"]).ok();
    a.run(&["pull"]).ok();
    assert_eq!(a.run(&["show", &id]).ok(), b.run(&["show", &id]).ok());
}

#[test]
fn a_convo_push_after_a_plain_git_push_publishes_what_git_pushed_and_what_changed_since() {
    let TwoPeople { a, url, served: _served, .. } = two_people();
    let ids: Vec<String> = (0..4)
        .map(|n| {
            let id = a.new_conversation(&format!("talk {n}"));
            a.run(&["append", "--user", "one"]).ok();
            id
        })
        .collect();
    a.run(&["remote", "add", "origin", &url]).ok();
    a.run(&["push"]).ok();
    a.run(&["append", &ids[1], "--user", "two"]).ok();
    // git's own push moves the branch past what the catalog describes.
    a.git(&["push", "-q", "origin", "HEAD:refs/heads/main"]);
    a.run(&["append", &ids[2], "--user", "three"]).ok();
    let (pushed, calls) = with_logging_git(&a, a.command(&["push"]));
    pushed.ok();
    let push = calls.iter().find(|c| c.split(' ').any(|word| word == "push")).expect("a git push");
    let refs: Vec<&str> = push.split(' ').filter(|arg| arg.contains("refs/convo/conversations/")).collect();
    assert_eq!(refs.len(), 2, "the one git pushed and the one changed since: {push:?}");
    assert!(refs.iter().any(|r| r.ends_with(&ids[1])) && refs.iter().any(|r| r.ends_with(&ids[2])), "{refs:?}");
    // And the hub's catalog and refs are whole: a lazy clone reads every conversation.
    let b = TestEnv::bare_at(100);
    b.run(&["clone", "--lazy", &url, b.store.to_str().unwrap()]).ok();
    for id in &ids {
        assert_eq!(b.run(&["show", id]).ok(), a.run(&["show", id]).ok());
    }
}
