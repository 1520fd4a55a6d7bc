//! Library passes ([`PassStore`]): their records, lookups by hash, each library's list, atomic
//! spending, and which published libraries sell an asset.
//!
//! A pass is a record in `passes` (by id) with its hash in `pass_hashes`. Each library with
//! passes has one key in `library_passes` whose value lists them ([`PassListRec`]), newest
//! first, read and written whole by the transactions: a sled transaction cannot scan, and
//! [`Inner::delete_library`] must find the passes of the library it deletes in its own
//! transaction, so that a pass made while its library is deleted either comes first (and goes
//! with it) or finds the library missing. [`Inner::insert_pass`] reads the library record and
//! writes the list in one transaction, so sled serializes the two.
//!
//! A spend is one transaction on the pass record (check, then add one), and sled runs
//! transactions one at a time (each holds its concurrency lock for writing), so concurrent
//! spends in this process never pass the limit nor lose a download; only one process opens a
//! sled directory.

use assetlib_core::events::{Log, Written};
use std::collections::{HashMap, HashSet};

use assetlib_core::{Holders, LibraryPass, Page, PassSpend, PassStore, StoreError, async_trait};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sled::Transactional;
use sled::transaction::TransactionalTree;
use uuid::Uuid;

use crate::error::{Error, TxError, abort};
use crate::events::EventSlot;
use crate::record::{LibraryRec, Ts, UsesRec, decode, decode_id, encode};
use crate::{Inner, SledStore, tree_keys};

/// A library pass record, without its id (the key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PassRec {
    pub(crate) library: [u8; 16],
    pub(crate) token_hash: [u8; 32],
    pub(crate) label: String,
    pub(crate) expires_at: Ts,
    pub(crate) max_downloads: Option<u64>,
    pub(crate) downloads_used: u64,
    pub(crate) asset_ids: Option<Vec<[u8; 16]>>,
    pub(crate) created_at: Ts,
    pub(crate) revoked_at: Option<Ts>,
}

impl PassRec {
    pub(crate) const WHAT: &'static str = "library pass";

    pub(crate) fn new(p: &LibraryPass) -> Self {
        PassRec {
            library: p.library_id.into_bytes(),
            token_hash: p.token_hash,
            label: p.label.clone(),
            expires_at: (&p.expires_at).into(),
            max_downloads: p.max_downloads,
            downloads_used: p.downloads_used,
            asset_ids: p
                .asset_ids
                .as_ref()
                .map(|ids| ids.iter().map(|id| id.into_bytes()).collect()),
            created_at: (&p.created_at).into(),
            revoked_at: p.revoked_at.as_ref().map(Ts::from),
        }
    }

    pub(crate) fn into_pass(self, id: Uuid) -> Result<LibraryPass, Error> {
        Ok(LibraryPass {
            id,
            library_id: Uuid::from_bytes(self.library),
            token_hash: self.token_hash,
            label: self.label,
            expires_at: self.expires_at.time()?,
            max_downloads: self.max_downloads,
            downloads_used: self.downloads_used,
            asset_ids: self
                .asset_ids
                .map(|ids| ids.into_iter().map(Uuid::from_bytes).collect()),
            created_at: self.created_at.time()?,
            revoked_at: self.revoked_at.map(Ts::time).transpose()?,
        })
    }
}

/// The passes of one library: the value of its key (the library id) in `library_passes`.
/// Each pass is named by its place ([`tree_keys::pass_place`]: created time, then id), in
/// descending byte order, so newest first and then by id descending. A library without
/// passes has no key.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) struct PassListRec {
    pub(crate) places: Vec<[u8; 28]>,
}

impl PassListRec {
    pub(crate) const WHAT: &'static str = "library passes";

    /// Adds a place where the order wants it.
    pub(crate) fn add(&mut self, place: [u8; 28]) {
        // The list descends: a place greater than the new one comes before it.
        if let Err(i) = self.places.binary_search_by(|p| place.cmp(p)) {
            self.places.insert(i, place);
        }
    }

    /// The pass ids, newest first.
    pub(crate) fn ids(&self) -> impl Iterator<Item = Uuid> + '_ {
        self.places.iter().map(|place| {
            let mut id = [0; 16];
            id.copy_from_slice(&place[12..]);
            Uuid::from_bytes(id)
        })
    }
}

/// Reads a library's list of passes (empty when it has none).
pub(crate) fn read_list(lists: &TransactionalTree, library: Uuid) -> Result<PassListRec, TxError> {
    match lists.get(library.as_bytes())? {
        Some(v) => decode(PassListRec::WHAT, &v).map_err(abort),
        None => Ok(PassListRec::default()),
    }
}

/// Removes a library's passes, their hash entries and its list of them, inside a transaction
/// (the one of [`Inner::delete_library`]). A listed pass whose record is missing has nothing
/// left to remove.
pub(crate) fn remove_library_passes(
    passes: &TransactionalTree,
    hashes: &TransactionalTree,
    lists: &TransactionalTree,
    library: Uuid,
) -> Result<(), TxError> {
    let list = read_list(lists, library)?;
    for id in list.ids() {
        if let Some(v) = passes.remove(id.as_bytes())? {
            let rec: PassRec = decode(PassRec::WHAT, &v).map_err(abort)?;
            if hashes.get(rec.token_hash)?.as_deref() == Some(id.as_bytes()) {
                hashes.remove(&rec.token_hash[..])?;
            }
        }
    }
    lists.remove(library.as_bytes())?;
    Ok(())
}

impl Inner {
    fn pass_rec(&self, id: Uuid) -> Result<Option<PassRec>, Error> {
        self.get(&self.passes, id.as_bytes())?
            .map(|v| decode(PassRec::WHAT, &v))
            .transpose()
    }

    pub(crate) fn get_pass(&self, id: Uuid) -> Result<Option<LibraryPass>, Error> {
        self.pass_rec(id)?.map(|rec| rec.into_pass(id)).transpose()
    }

    /// The pass whose hash is `token_hash`. The hash entry and the record are two reads: a
    /// delete of the pass's library between them leaves no record, and no pass.
    pub(crate) fn find_pass(&self, token_hash: &[u8; 32]) -> Result<Option<LibraryPass>, Error> {
        match self.get(&self.pass_hashes, token_hash)? {
            Some(id) => self.get_pass(decode_id("pass hash entry", &id)?),
            None => Ok(None),
        }
    }

    /// Stores a pass in one transaction with a read of its library's record: the record,
    /// the hash entry, and its place in the library's list.
    pub(crate) fn insert_pass(&self, pass: &LibraryPass, event: &EventSlot) -> Result<(), Error> {
        let id = pass.id;
        let library = pass.library_id;
        let value = encode(PassRec::WHAT, &PassRec::new(pass))?;
        let place = tree_keys::pass_place(&pass.created_at, id);
        (
            &self.libraries,
            &self.passes,
            &self.pass_hashes,
            &self.library_passes,
            &self.events,
        )
            .transaction(|(libs, records, hashes, lists, events)| {
                if libs.get(library.as_bytes())?.is_none() {
                    return Err(abort(Error::UnknownLibrary(library)));
                }
                if records.get(id.as_bytes())?.is_some() {
                    return Err(abort(Error::DuplicateId(id)));
                }
                if hashes.get(pass.token_hash)?.is_some() {
                    return Err(abort(Error::DuplicateKeyHash));
                }
                let mut list = read_list(lists, library)?;
                list.add(place);
                records.insert(&id.as_bytes()[..], value.as_slice())?;
                hashes.insert(&pass.token_hash[..], &id.as_bytes()[..])?;
                lists.insert(
                    &library.as_bytes()[..],
                    encode(PassListRec::WHAT, &list).map_err(abort)?,
                )?;
                event.put(events, Written::PassCreated(pass))?;
                Ok(())
            })?;
        Ok(())
    }

    /// One read of the library's list, then one record read per pass of the page. Reads are
    /// not snapshots: a pass whose library is deleted meanwhile is left out.
    pub(crate) fn list_passes(
        &self,
        library: Uuid,
        offset: u64,
        limit: u32,
    ) -> Result<Page<LibraryPass>, Error> {
        let list: PassListRec = match self.get(&self.library_passes, library.as_bytes())? {
            Some(v) => decode(PassListRec::WHAT, &v)?,
            None => PassListRec::default(),
        };
        let total = list.places.len() as u64;
        let skip = usize::try_from(offset).unwrap_or(usize::MAX);
        let take = usize::try_from(limit).unwrap_or(usize::MAX);
        let mut items = Vec::with_capacity(take.min(list.places.len()));
        for id in list.ids().skip(skip).take(take) {
            if let Some(pass) = self.get_pass(id)? {
                items.push(pass);
            }
        }
        Ok(Page { items, total })
    }

    pub(crate) fn revoke_pass(
        &self,
        id: Uuid,
        at: DateTime<Utc>,
        event: &EventSlot,
    ) -> Result<bool, Error> {
        let at = Ts::from(&at);
        let found = (&self.passes, &self.events).transaction(|(records, events)| {
            let Some(v) = records.get(id.as_bytes())? else {
                return Ok(false);
            };
            let mut rec: PassRec = decode(PassRec::WHAT, &v).map_err(abort)?;
            if rec.revoked_at.is_none() {
                rec.revoked_at = Some(at);
                records.insert(
                    &id.as_bytes()[..],
                    encode(PassRec::WHAT, &rec).map_err(abort)?,
                )?;
                event.put(events, Written::PassRevoked(id))?;
            }
            Ok(true)
        })?;
        Ok(found)
    }

    /// Checks and counts one download in one transaction on the pass record.
    fn spend_pass(&self, id: Uuid, now: DateTime<Utc>) -> Result<PassSpend, Error> {
        let spend = self.passes.transaction(|records| {
            let Some(v) = records.get(id.as_bytes())? else {
                return Ok(PassSpend::Dead);
            };
            let mut rec: PassRec = decode(PassRec::WHAT, &v).map_err(abort)?;
            let pass = rec.clone().into_pass(id).map_err(abort)?;
            if !pass.is_live(now) {
                return Ok(PassSpend::Dead);
            }
            if pass.is_exhausted() {
                return Ok(PassSpend::Exhausted);
            }
            rec.downloads_used = rec.downloads_used.checked_add(1).ok_or_else(|| {
                abort(Error::invalid(
                    PassRec::WHAT,
                    format!("pass {id} has made 2^64 - 1 downloads"),
                ))
            })?;
            records.insert(
                &id.as_bytes()[..],
                encode(PassRec::WHAT, &rec).map_err(abort)?,
            )?;
            Ok(PassSpend::Spent(LibraryPass {
                downloads_used: rec.downloads_used,
                ..pass
            }))
        })?;
        Ok(spend)
    }

    /// One read of each asset's uses, and one record read per library they name.
    pub(crate) fn published_holders(&self, asset_ids: &[Uuid]) -> Result<Vec<Holders>, Error> {
        // Per library: `Some(is_paid)` when it is published, `None` when not (or gone).
        let mut sells: HashMap<Uuid, Option<bool>> = HashMap::new();
        let mut seen = HashSet::with_capacity(asset_ids.len());
        let mut out = Vec::new();
        for &asset_id in asset_ids {
            if !seen.insert(asset_id) {
                continue;
            }
            let Some(v) = self.get(&self.asset_uses, asset_id.as_bytes())? else {
                continue;
            };
            let uses: UsesRec = decode(UsesRec::WHAT, &v)?;
            let mut holders = Holders {
                asset_id,
                paid: false,
                free: false,
            };
            for holder in &uses.holders {
                let library = holder.library();
                let paid = match sells.get(&library) {
                    Some(known) => *known,
                    None => {
                        let rec: Option<LibraryRec> = self.library_rec(library)?;
                        let paid = rec.filter(|r| r.published).map(|r| r.is_paid);
                        sells.insert(library, paid);
                        paid
                    }
                };
                match paid {
                    Some(true) => holders.paid = true,
                    Some(false) => holders.free = true,
                    None => {}
                }
            }
            if holders.paid || holders.free {
                out.push(holders);
            }
        }
        Ok(out)
    }
}

#[async_trait]
impl PassStore for SledStore {
    async fn insert_pass(&self, pass: LibraryPass, log: &Log) -> Result<(), StoreError> {
        self.logged_write(log, move |inner, event| inner.insert_pass(&pass, event))
            .await
    }

    async fn find_pass(&self, token_hash: &[u8; 32]) -> Result<Option<LibraryPass>, StoreError> {
        self.point_read(|inner| inner.find_pass(token_hash))
    }

    async fn get_pass(&self, id: Uuid) -> Result<Option<LibraryPass>, StoreError> {
        self.point_read(|inner| inner.get_pass(id))
    }

    async fn list_passes(
        &self,
        library_id: Uuid,
        offset: u64,
        limit: u32,
    ) -> Result<Page<LibraryPass>, StoreError> {
        self.blocking(move |inner| inner.list_passes(library_id, offset, limit))
            .await
    }

    async fn revoke_pass(
        &self,
        id: Uuid,
        at: DateTime<Utc>,
        log: &Log,
    ) -> Result<bool, StoreError> {
        self.logged_write(log, move |inner, event| inner.revoke_pass(id, at, event))
            .await
    }

    // The check and count run in one transaction; the answer comes once the store is
    // flushed (through the group commit, like every write), so a spend that counted is
    // durable and a refusal was decided on durable counts.
    async fn spend_pass(&self, id: Uuid, now: DateTime<Utc>) -> Result<PassSpend, StoreError> {
        self.write(move |inner| inner.spend_pass(id, now)).await
    }
}

impl SledStore {
    /// What [`assetlib_core::LibraryStore::published_holders`] answers.
    pub(crate) async fn holders_of(&self, asset_ids: &[Uuid]) -> Result<Vec<Holders>, StoreError> {
        let asset_ids = asset_ids.to_vec();
        self.blocking(move |inner| inner.published_holders(&asset_ids))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_list_runs_newest_first_then_by_id_descending() {
        let at = |secs| DateTime::from_timestamp(secs, 0).expect("valid time");
        let id = |n: u8| Uuid::from_bytes([n; 16]);
        let mut list = PassListRec::default();
        for (secs, n) in [(10, 1), (30, 2), (20, 3), (20, 9), (20, 5), (-5, 7)] {
            list.add(tree_keys::pass_place(&at(secs), id(n)));
        }
        list.add(tree_keys::pass_place(&at(20), id(9)));
        let ids: Vec<Uuid> = list.ids().collect();
        assert_eq!(ids, [2, 9, 5, 3, 1, 7].map(id));
    }
}
