//! Change notices, and the versions core keeps its cached answers under.
//!
//! Every write transaction sends a notice at commit (triggers of migration 8, `pg_notify` on
//! the channel named like the schema): `a<id>` when asset `<id>` was inserted or deleted
//! (migration 17), `a<id>/<orders>` when it was updated, with the list orders the update
//! moved as [`ListOrders::bits`] (migration 23),
//! `a` when download counts were, `l<id>` when the content or publication of library `<id>`
//! changed or it was deleted, `k<id>` when an API key was revoked or deleted; then a space and
//! the origin of the store that wrote (the session setting `assetlib.origin` its connections
//! set). A store skips its own notices: it moved the versions when its writes returned. Each
//! store keeps one listening connection (`LISTEN`) and, while it is up, answers version reads from
//! memory: a notice moves the version it names, so another replica's write is seen as soon as
//! its notice arrives (well within 100 ms on one network). Its own writes move the versions
//! before they return.
//!
//! While the listening connection is down (and always with [`ReplicaSync::Strict`], or for a
//! store over an app's own pool, which has no connection settings to listen with) every
//! version read asks the database. When the connection comes back every version moves, as
//! notices may have been missed meanwhile.
//!
//! Versions are taken from one counter of this process, so none is ever handed out twice.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use assetlib_core::store::{AssetVersions, ListOrders};
use assetlib_core::{AssetQuery, AssetUpdate, ReplicaSync, SlugHolder};
use tokio_postgres::{AsyncMessage, NoTls};
use uuid::Uuid;

use crate::slug_holders::{LibraryWritten, SlugHolders};

/// How often the listening connection is checked with a query, to notice a connection that
/// died without closing.
const HEARTBEAT: Duration = Duration::from_secs(1);
/// The `application_name` of listening connections, as `pg_stat_activity` shows them.
pub(crate) const LISTENER_NAME: &str = "assetlib-notices";
/// The longest wait between attempts to listen again.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// What a notice says changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Notice {
    /// The assets (their download counts, from schema 17 on).
    Assets,
    /// One asset (schema 17 on), and the list orders its write moved (schema 23 on: every
    /// order for a notice of an earlier schema, or of an insert or a delete).
    Asset(Uuid, ListOrders),
    /// One library's content, publication or existence.
    Library(Uuid),
    /// One API key.
    Key,
    /// Anything: a notice that could not be read.
    Everything,
}

impl Notice {
    /// Reads a notice's payload: `None` for a notice of a write by the store of origin
    /// `own`; one it cannot read is [`Notice::Everything`].
    pub(crate) fn parse(payload: &str, own: &str) -> Option<Notice> {
        let (what, origin) = payload.split_once(' ').unwrap_or((payload, ""));
        if !origin.is_empty() && origin == own {
            return None;
        }
        Some(match what.split_at_checked(1) {
            Some(("a", "")) => Notice::Assets,
            Some(("a", asset)) => parse_asset(asset).unwrap_or(Notice::Everything),
            Some(("l", id)) => id.parse().map_or(Notice::Everything, Notice::Library),
            Some(("k", id)) if id.parse::<Uuid>().is_ok() => Notice::Key,
            _ => Notice::Everything,
        })
    }
}

/// An asset notice after its `a`: `<id>` or `<id>/<orders>`.
fn parse_asset(what: &str) -> Option<Notice> {
    let (id, orders) = match what.split_once('/') {
        None => (what, ListOrders::EVERY),
        Some((id, bits)) => (id, ListOrders::from_bits(bits.parse().ok()?)?),
    };
    Some(Notice::Asset(id.parse().ok()?, orders))
}

/// A new store's origin: 32 hex digits, unique to it.
pub(crate) fn new_origin() -> String {
    Uuid::new_v4().simple().to_string()
}

/// `config` with the session setting that marks its connections' writes as the store's of
/// origin `origin`, after any options it had.
pub(crate) fn with_origin(
    mut config: tokio_postgres::Config,
    origin: &str,
) -> tokio_postgres::Config {
    let mut options = config.get_options().unwrap_or("").to_owned();
    if !options.is_empty() {
        options.push(' ');
    }
    options.push_str("-c assetlib.origin=");
    options.push_str(origin);
    config.options(options);
    config
}

/// What this process knows of a published library without asking the database.
#[derive(Debug, Clone)]
pub(crate) struct KnownLibrary {
    /// The library's workspace when it was read (a workspace changes only with the content
    /// version, by a `PUT`).
    pub(crate) workspace: Option<std::sync::Arc<str>>,
    /// The library's content version in the database when it was read.
    pub(crate) db_version: u64,
    /// The version handed to readers for it (from this process's counter).
    pub(crate) version: u64,
    /// Its stored view count, as last read or written (this process's unwritten views are
    /// kept apart, in [`crate::counters`]).
    pub(crate) views: u64,
    /// When `views` was read from the database.
    pub(crate) read_at: Instant,
    /// When it was last viewed through this process.
    pub(crate) used_at: Instant,
    /// Whether no notice about it came since it was read: only then is it answered from
    /// memory. A stale one keeps its version for a read that finds the same content version.
    pub(crate) fresh: bool,
}

#[derive(Debug, Default)]
struct Versions {
    /// The database's assets version when last asked.
    assets_db: Option<u64>,
    /// The keys version handed out now.
    keys: u64,
    /// Libraries known to be published, with their versions and counts.
    libraries: HashMap<Uuid, KnownLibrary>,
    /// Moves with every change of a library: the mark a read takes before it asks the
    /// database ([`Replica::mark`]).
    changes: u64,
    /// The libraries changed lately, each with `changes` as its last change left it: a read
    /// of one that took its mark before that is not trusted. Emptied (moving `floor`) once it
    /// holds [`CHANGES_KEPT`].
    changed: HashMap<Uuid, u64>,
    /// No read that took its mark before this is trusted: every library changed then (a
    /// notice that could not be read, an asset deleted), or `changed` was emptied.
    floor: u64,
}

/// How many changed libraries [`Versions::changed`] keeps before it is emptied: at a few
/// hundred library changes a second, emptied every few seconds, so at most a read in flight
/// then asks the database once more.
const CHANGES_KEPT: usize = 4096;

impl Versions {
    /// Library `id` changed: what is known of it is stale, and so is any read of it in flight.
    fn library_changed(&mut self, id: Uuid) {
        self.changes += 1;
        if self.changed.len() >= CHANGES_KEPT {
            self.changed.clear();
            self.floor = self.changes;
        }
        self.changed.insert(id, self.changes);
        if let Some(known) = self.libraries.get_mut(&id) {
            known.fresh = false;
        }
    }

    /// Every library may have changed: all that is known and every read in flight is stale.
    fn every_library_changed(&mut self) {
        self.changes += 1;
        self.floor = self.changes;
        self.changed.clear();
        self.libraries.values_mut().for_each(|k| k.fresh = false);
    }

    /// Whether a read of library `id` that took `mark` before it saw every change of it.
    fn read_is_current(&self, id: &Uuid, mark: u64) -> bool {
        mark >= self.floor && self.changed.get(id).is_none_or(|&at| at <= mark)
    }
}

/// The versions of one store, shared by its clones and its listening task.
#[derive(Debug, Default)]
pub(crate) struct Replica {
    /// 0: notify, 1: strict.
    mode: AtomicU8,
    /// Whether the listening connection is up and listening.
    live: AtomicBool,
    /// The source of every library and keys version handed out.
    seq: AtomicU64,
    /// The assets' versions, of all of them and of each one: this process's writes move
    /// those of the assets they wrote, another process's notice moves every asset's.
    assets: AssetVersions,
    versions: Mutex<Versions>,
    /// The libraries holding each slug read lately.
    slugs: SlugHolders,
}

impl Replica {
    fn lock(&self) -> MutexGuard<'_, Versions> {
        // Every change of the versions is a few plain assignments; none can be half done.
        self.versions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn next(&self) -> u64 {
        self.seq.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Sets how versions are kept current.
    pub(crate) fn set_mode(&self, mode: ReplicaSync) {
        let code = u8::from(mode == ReplicaSync::Strict);
        self.mode.store(code, Ordering::Relaxed);
    }

    /// Whether versions may be answered from memory: notify mode with the listening
    /// connection up.
    pub(crate) fn trusts_notices(&self) -> bool {
        self.mode.load(Ordering::Relaxed) == 0 && self.live.load(Ordering::Acquire)
    }

    /// The assets version, when it may be answered from memory.
    pub(crate) fn assets_version(&self) -> Option<u64> {
        self.trusts_notices().then(|| self.assets.all())
    }

    /// The version of asset `id`, when it may be answered from memory.
    pub(crate) fn asset_version(&self, id: Uuid) -> Option<u64> {
        self.trusts_notices().then(|| self.assets.of(id))
    }

    /// The assets version, given the database's version `db` read just now: every asset's
    /// version moves when the database's did.
    pub(crate) fn assets_version_at(&self, db: u64) -> u64 {
        let mut v = self.lock();
        if v.assets_db.is_none_or(|known| db > known) {
            v.assets_db = Some(db);
            self.assets.moved_all();
        }
        self.assets.all()
    }

    /// The version of asset `id`, given the database's assets version `db` read just now.
    pub(crate) fn asset_version_at(&self, db: u64, id: Uuid) -> u64 {
        self.assets_version_at(db);
        self.assets.of(id)
    }

    /// This process wrote the assets `ids` (or counted their downloads).
    pub(crate) fn assets_changed(&self, ids: impl IntoIterator<Item = Uuid>) {
        self.assets.moved(ids);
    }

    /// The keys version, when it may be answered from memory.
    pub(crate) fn keys_version(&self) -> Option<u64> {
        self.trusts_notices().then(|| self.lock().keys)
    }

    /// What is known of library `id` (when versions may be answered from memory), marked
    /// used now.
    pub(crate) fn known_library(&self, id: Uuid) -> Option<KnownLibrary> {
        if !self.trusts_notices() {
            return None;
        }
        let mut v = self.lock();
        let known = v.libraries.get_mut(&id).filter(|k| k.fresh)?;
        known.used_at = Instant::now();
        Some(known.clone())
    }

    /// A mark to pass to [`Replica::learn_library`] once a read that started after it ends.
    pub(crate) fn mark(&self) -> u64 {
        self.lock().changes
    }

    /// The version of library `id`, read from the database just now (content version
    /// `db_version`, stored views `views`, of `workspace`) by a read that took `mark` before
    /// it: kept when nothing changed meanwhile.
    pub(crate) fn learn_library(
        &self,
        id: Uuid,
        (db_version, views, mark): (u64, u64, u64),
        workspace: Option<&str>,
    ) -> u64 {
        let mut v = self.lock();
        let now = Instant::now();
        let version = match v.libraries.get(&id) {
            Some(known) if known.db_version == db_version => known.version,
            _ => self.next(),
        };
        let known = KnownLibrary {
            workspace: workspace.map(std::sync::Arc::from),
            db_version,
            version,
            views,
            read_at: now,
            used_at: now,
            fresh: v.read_is_current(&id, mark),
        };
        v.libraries.insert(id, known);
        version
    }

    /// Library `id` is not published (or gone), as a read found just now.
    pub(crate) fn unknown_library(&self, id: Uuid) {
        self.lock().libraries.remove(&id);
    }

    /// Sets the stored view counts just read or written (by the counters' flush), for the
    /// libraries known.
    pub(crate) fn stored_views(&self, counts: &[(Uuid, u64)]) {
        let mut v = self.lock();
        let now = Instant::now();
        for (id, views) in counts {
            if let Some(known) = v.libraries.get_mut(id) {
                known.views = known.views.max(*views);
                known.read_at = now;
            }
        }
    }

    /// The known libraries whose stored views were read longer ago than `stale`; those not
    /// viewed for `idle` are forgotten.
    pub(crate) fn stale_libraries(&self, stale: Duration, idle: Duration) -> Vec<Uuid> {
        let mut v = self.lock();
        v.libraries.retain(|_, k| k.used_at.elapsed() < idle);
        v.libraries
            .iter()
            .filter(|(_, k)| k.fresh && k.read_at.elapsed() >= stale)
            .map(|(id, _)| *id)
            .collect()
    }

    /// Applies what a notice, or a write of this process, says changed.
    pub(crate) fn changed(&self, what: Notice) {
        let mut v = self.lock();
        match what {
            // A change of assets reaches the libraries holding them as their own notices
            // (their content versions move), so it leaves what is known of libraries alone:
            // downloads, say, do not make library views ask the database.
            Notice::Assets => self.assets.moved_all(),
            Notice::Asset(id, orders) => self.assets.moved_in([id], orders),
            Notice::Library(id) => {
                v.library_changed(id);
                self.slugs.forget_all();
            }
            Notice::Key => v.keys = self.next(),
            Notice::Everything => {
                self.assets.moved_all();
                v.keys = self.next();
                v.every_library_changed();
                self.slugs.forget_all();
            }
        }
    }

    /// This process wrote library `id`, or tried to (a write that failed may still have
    /// committed).
    pub(crate) fn library_written(&self, id: Uuid, written: LibraryWritten<'_>) {
        self.lock().library_changed(id);
        self.slugs.forget_library(id, written);
    }

    /// The libraries holding `slug`, when they may be answered from memory and are kept.
    pub(crate) fn slug_holders(&self, slug: &str) -> Option<Vec<SlugHolder>> {
        self.trusts_notices()
            .then(|| self.slugs.get(slug))
            .flatten()
    }

    /// A mark to pass to [`Replica::learn_slug`] once a read that started after it ends.
    pub(crate) fn slug_mark(&self) -> u64 {
        self.slugs.mark()
    }

    /// The libraries holding `slug`, read from the database just now by a read that took
    /// `mark` before it: kept when nothing that may change them came meanwhile.
    pub(crate) fn learn_slug(&self, slug: &str, holders: &[SlugHolder], mark: u64) {
        if self.trusts_notices() {
            self.slugs.learn(slug, holders, mark);
        }
    }

    /// This process deleted the assets `ids`: their versions and every list's move, and
    /// every library's content may have changed (they may hold them).
    pub(crate) fn libraries_changed(&self, ids: impl IntoIterator<Item = Uuid>) {
        let mut v = self.lock();
        self.assets.moved(ids);
        v.every_library_changed();
    }

    /// This process made `updates` (some may have changed nothing): the versions of the
    /// assets they changed move, and of the lists whose order they can move
    /// ([`AssetVersions::updated`]). The content versions of the libraries `holders` moved
    /// with them; when the holders are not known (`None`) every library's content may have
    /// changed, if any asset did.
    pub(crate) fn assets_updated<'a>(
        &self,
        updates: impl IntoIterator<Item = &'a AssetUpdate>,
        holders: Option<&[Uuid]>,
    ) {
        let mut v = self.lock();
        let changed = self.assets.updated(updates);
        match holders {
            Some(holders) => holders.iter().for_each(|&id| v.library_changed(id)),
            None if changed => v.every_library_changed(),
            None => {}
        }
    }

    /// This process counted downloads of the assets `ids`: their versions move, no list's.
    pub(crate) fn downloads_counted(&self, ids: impl IntoIterator<Item = Uuid>) {
        self.assets.counted(ids);
    }

    /// The version of the lists `query` pages through, when it may be answered from memory.
    pub(crate) fn list_version(&self, query: &AssetQuery) -> Option<u64> {
        self.trusts_notices().then(|| self.assets.list(query))
    }

    fn set_live(&self, live: bool) {
        // Notices may have been missed on either side of the change: everything moves.
        self.live.store(live, Ordering::Release);
        self.changed(Notice::Everything);
    }
}

/// Sets the replica not live when the listening task ends, however it ends (its runtime may
/// shut down with it).
struct NotLiveOnDrop(Weak<Replica>);

impl Drop for NotLiveOnDrop {
    fn drop(&mut self) {
        if let Some(replica) = self.0.upgrade() {
            replica.set_live(false);
        }
    }
}

/// Where a listening task listens: its connection settings, its channel (the schema's
/// name), and the origin of its store's own writes.
pub(crate) struct Listen {
    pub(crate) config: tokio_postgres::Config,
    pub(crate) channel: String,
    pub(crate) origin: String,
}

/// Starts the task that listens with a connection of its own, for as long as `replica`
/// lives; returns once it listens, or after `wait` (reads then check the database until it
/// does).
pub(crate) async fn listen(replica: &Arc<Replica>, to: Listen, wait: Duration) {
    let weak = Arc::downgrade(replica);
    let (first, listening) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let _guard = NotLiveOnDrop(weak.clone());
        let mut first = Some(first);
        let mut backoff = Duration::from_millis(50);
        while weak.strong_count() > 0 {
            match listen_once(&weak, &to, &mut first).await {
                Ok(()) => backoff = Duration::from_millis(50),
                Err(e) => {
                    tracing::warn!(error = %e, "the change notice connection failed; every read checks the database until it is back");
                }
            }
            if let Some(replica) = weak.upgrade()
                && replica.live.load(Ordering::Acquire)
            {
                replica.set_live(false);
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    });
    let _ = tokio::time::timeout(wait, listening).await;
}

/// One listening connection, from connect to its end (`Ok` when the store is gone).
async fn listen_once(
    weak: &Weak<Replica>,
    to: &Listen,
    first: &mut Option<tokio::sync::oneshot::Sender<()>>,
) -> Result<(), tokio_postgres::Error> {
    let mut config = to.config.clone();
    config.application_name(LISTENER_NAME);
    let (client, mut connection) = config.connect(NoTls).await?;
    let own = to.origin.clone();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    // The connection carries the client's queries and brings the notices; it ends (and drops
    // `tx`) when the connection closes.
    let driver = tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(n))) => {
                    let Some(notice) = Notice::parse(n.payload(), &own) else {
                        continue;
                    };
                    if tx.send(notice).is_err() {
                        return;
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "the change notice connection closed");
                    return;
                }
                None => return,
            }
        }
    });
    let _stop = AbortOnDrop(driver);
    // The schema name is a checked identifier (crate::schema), so it needs no escaping.
    client
        .batch_execute(&format!("LISTEN \"{}\"", to.channel))
        .await?;
    match weak.upgrade() {
        Some(replica) => replica.set_live(true),
        None => return Ok(()),
    }
    if let Some(first) = first.take() {
        let _ = first.send(());
    }
    let mut beat = tokio::time::interval(HEARTBEAT);
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            notice = rx.recv() => {
                let Some(notice) = notice else {
                    return client.batch_execute("").await;
                };
                let Some(replica) = weak.upgrade() else { return Ok(()) };
                if notice == Notice::Everything {
                    tracing::warn!("a change notice could not be read; treating it as a change of everything");
                }
                replica.changed(notice);
            }
            _ = beat.tick() => {
                if weak.strong_count() == 0 {
                    return Ok(());
                }
                match tokio::time::timeout(HEARTBEAT, client.simple_query("")).await {
                    Ok(result) => { result?; }
                    Err(_) => {
                        tracing::warn!("the change notice connection stopped answering");
                        return Ok(());
                    }
                }
            }
        }
    }
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
#[path = "notices_test.rs"]
mod tests;
