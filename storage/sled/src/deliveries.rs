//! Webhook deliveries: enqueued with the dispatch cursor, claimed, recorded, listed, retried
//! and purged (the trees `deliveries`, `delivery_due`, `webhook_deliveries`, and the cursor in
//! `meta`; see `webhooks.rs`).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use assetlib_core::Page;
use assetlib_core::events::EventCursor;
use assetlib_core::webhooks::{Attempt, Claimed, Delivery, DeliveryStatus, Webhook};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sled::Transactional;
use sled::transaction::TransactionalTree;
use uuid::Uuid;

use crate::error::{Error, TxError, abort};
use crate::record::{Ts, decode, encode};
use crate::webhooks::{WebhookRec, read_hook, write_hook};
use crate::{Inner, tree_keys};

/// The key of the dispatch cursor in `meta`.
const CURSOR: &[u8] = b"webhook_cursor";

/// Deliveries removed per transaction when a webhook goes or old ones are purged.
const BATCH: usize = 500;

/// A delivery, without its id (the key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct DeliveryRec {
    webhook: [u8; 16],
    event: [u8; 16],
    event_type: String,
    payload: String,
    /// 0 pending, 1 succeeded, 2 failed.
    status: u8,
    attempts: u32,
    created_at: Ts,
    last_attempt_at: Option<Ts>,
    last_response_status: Option<u16>,
    last_error: Option<String>,
    next_attempt_at: Option<Ts>,
}

impl DeliveryRec {
    const WHAT: &'static str = "webhook delivery";

    fn new(d: &Delivery) -> Self {
        DeliveryRec {
            webhook: d.webhook_id.into_bytes(),
            event: d.event_id.into_bytes(),
            event_type: d.event_type.clone(),
            payload: d.payload.clone(),
            status: match d.status {
                DeliveryStatus::Pending => 0,
                DeliveryStatus::Succeeded => 1,
                DeliveryStatus::Failed => 2,
            },
            attempts: d.attempts,
            created_at: (&d.created_at).into(),
            last_attempt_at: d.last_attempt_at.as_ref().map(Ts::from),
            last_response_status: d.last_response_status,
            last_error: d.last_error.clone(),
            next_attempt_at: d.next_attempt_at.as_ref().map(Ts::from),
        }
    }

    fn into_delivery(self, id: Uuid) -> Result<Delivery, Error> {
        Ok(Delivery {
            id,
            webhook_id: Uuid::from_bytes(self.webhook),
            event_id: Uuid::from_bytes(self.event),
            event_type: self.event_type,
            payload: self.payload,
            status: match self.status {
                0 => DeliveryStatus::Pending,
                1 => DeliveryStatus::Succeeded,
                2 => DeliveryStatus::Failed,
                other => return Err(Error::invalid(Self::WHAT, format!("status {other}"))),
            },
            attempts: self.attempts,
            created_at: self.created_at.time()?,
            last_attempt_at: self.last_attempt_at.map(Ts::time).transpose()?,
            last_response_status: self.last_response_status,
            last_error: self.last_error,
            next_attempt_at: self.next_attempt_at.map(Ts::time).transpose()?,
        })
    }
}

/// A delivery's key in `delivery_due`.
fn due_key(next: &DateTime<Utc>, id: Uuid) -> [u8; 28] {
    tree_keys::pass_place(next, id)
}

/// A delivery's key in `webhook_deliveries`.
fn listed_key(webhook: Uuid, created_at: &DateTime<Utc>, id: Uuid) -> Vec<u8> {
    let mut key = webhook.as_bytes().to_vec();
    key.extend_from_slice(&tree_keys::ts(created_at));
    key.extend_from_slice(id.as_bytes());
    key
}

/// The trees a delivery's writes touch, inside a transaction.
struct Trees<'a> {
    records: &'a TransactionalTree,
    due: &'a TransactionalTree,
    listed: &'a TransactionalTree,
}

impl Trees<'_> {
    /// Writes `d` (new or changed from `old`), its due key and its list key.
    fn put(&self, d: &Delivery, old: Option<&Delivery>) -> Result<(), TxError> {
        if let Some(next) = old.and_then(|o| {
            o.next_attempt_at
                .filter(|_| o.status == DeliveryStatus::Pending)
        }) {
            self.due.remove(&due_key(&next, d.id)[..])?;
        }
        if let Some(next) = d
            .next_attempt_at
            .filter(|_| d.status == DeliveryStatus::Pending)
        {
            self.due
                .insert(&due_key(&next, d.id)[..], &d.webhook_id.as_bytes()[..])?;
        }
        if old.is_none() {
            self.listed
                .insert(listed_key(d.webhook_id, &d.created_at, d.id), &[][..])?;
        }
        let value = encode(DeliveryRec::WHAT, &DeliveryRec::new(d)).map_err(abort)?;
        self.records.insert(&d.id.as_bytes()[..], value)?;
        Ok(())
    }

    /// The delivery `id`, if stored.
    fn get(&self, id: Uuid) -> Result<Option<Delivery>, TxError> {
        match self.records.get(id.as_bytes())? {
            Some(v) => {
                let rec: DeliveryRec = decode(DeliveryRec::WHAT, &v).map_err(abort)?;
                Ok(Some(rec.into_delivery(id).map_err(abort)?))
            }
            None => Ok(None),
        }
    }

    /// Removes `d` and its keys.
    fn remove(&self, d: &Delivery) -> Result<(), TxError> {
        if let Some(next) = d
            .next_attempt_at
            .filter(|_| d.status == DeliveryStatus::Pending)
        {
            self.due.remove(&due_key(&next, d.id)[..])?;
        }
        self.listed
            .remove(listed_key(d.webhook_id, &d.created_at, d.id))?;
        self.records.remove(d.id.as_bytes())?;
        Ok(())
    }
}

/// Claims run one at a time in this process.
#[derive(Debug, Default)]
pub(crate) struct ClaimLock(Mutex<()>);

impl Inner {
    /// Removes the deliveries of webhook `id` made before `before` (all when `None`), oldest
    /// first, in batches; returns how many, and lowers the webhook's count by as many.
    pub(crate) fn remove_deliveries_of(
        &self,
        id: Uuid,
        before: Option<DateTime<Utc>>,
    ) -> Result<u64, Error> {
        let mut removed = 0;
        loop {
            let mut batch = Vec::with_capacity(BATCH);
            for item in self.webhook_deliveries.scan_prefix(id.as_bytes()) {
                let (key, _) = item?;
                let delivery = tree_keys::trailing_id(&key)?;
                let Some(v) = self.get(&self.deliveries, delivery.as_bytes())? else {
                    self.webhook_deliveries.remove(key)?;
                    continue;
                };
                let d = decode::<DeliveryRec>(DeliveryRec::WHAT, &v)?.into_delivery(delivery)?;
                if before.is_some_and(|b| d.created_at >= b) || batch.len() >= BATCH {
                    break;
                }
                batch.push(d);
            }
            if batch.is_empty() {
                return Ok(removed);
            }
            let n = batch.len() as u64;
            (
                &self.deliveries,
                &self.delivery_due,
                &self.webhook_deliveries,
                &self.webhooks,
            )
                .transaction(|(records, due, listed, hooks)| {
                    let trees = Trees {
                        records,
                        due,
                        listed,
                    };
                    for d in &batch {
                        trees.remove(d)?;
                    }
                    if let Some(mut rec) = read_hook(hooks, id)? {
                        rec.deliveries = rec.deliveries.saturating_sub(n);
                        write_hook(hooks, id, &rec)?;
                    }
                    Ok(())
                })?;
            removed += n;
        }
    }

    pub(crate) fn webhook_cursor(&self) -> Result<EventCursor, Error> {
        match self.get(&self.meta, CURSOR)? {
            Some(v) if v.len() == 16 => Ok(EventCursor(
                tree_keys::decode_u64("webhook cursor", &v[..8])?,
                tree_keys::decode_u64("webhook cursor", &v[8..])?,
            )),
            Some(v) => Err(Error::invalid(
                "webhook cursor",
                format!("{} bytes", v.len()),
            )),
            None => Ok(EventCursor::START),
        }
    }

    /// Stores `deliveries` of webhooks that exist and moves the cursor, in one transaction,
    /// when the cursor is still `from`.
    pub(crate) fn enqueue(
        &self,
        from: EventCursor,
        to: EventCursor,
        deliveries: &[Delivery],
    ) -> Result<bool, Error> {
        let mut cursor = Vec::with_capacity(16);
        cursor.extend_from_slice(&to.0.to_be_bytes());
        cursor.extend_from_slice(&to.1.to_be_bytes());
        let done = (
            &self.meta,
            &self.webhooks,
            &self.deliveries,
            &self.delivery_due,
            &self.webhook_deliveries,
        )
            .transaction(|(meta, hooks, records, due, listed)| {
                let stored = match meta.get(CURSOR)? {
                    Some(v) if v.len() == 16 => EventCursor(
                        tree_keys::decode_u64("webhook cursor", &v[..8]).map_err(abort)?,
                        tree_keys::decode_u64("webhook cursor", &v[8..]).map_err(abort)?,
                    ),
                    Some(_) => return Err(abort(Error::invalid("webhook cursor", "not 16 bytes"))),
                    None => EventCursor::START,
                };
                if stored != from {
                    return Ok(false);
                }
                meta.insert(CURSOR, cursor.as_slice())?;
                let trees = Trees {
                    records,
                    due,
                    listed,
                };
                let mut hook_recs: HashMap<Uuid, Option<WebhookRec>> = HashMap::new();
                for d in deliveries {
                    let rec = match hook_recs.get_mut(&d.webhook_id) {
                        Some(rec) => rec,
                        None => hook_recs
                            .entry(d.webhook_id)
                            .or_insert(read_hook(hooks, d.webhook_id)?),
                    };
                    let Some(rec) = rec else {
                        continue;
                    };
                    rec.deliveries += 1;
                    trees.put(d, None)?;
                }
                for (id, rec) in &hook_recs {
                    if let Some(rec) = rec {
                        write_hook(hooks, *id, rec)?;
                    }
                }
                Ok(true)
            })?;
        Ok(done)
    }

    pub(crate) fn insert_delivery(&self, d: &Delivery) -> Result<bool, Error> {
        let stored = (
            &self.webhooks,
            &self.deliveries,
            &self.delivery_due,
            &self.webhook_deliveries,
        )
            .transaction(|(hooks, records, due, listed)| {
                let Some(mut rec) = read_hook(hooks, d.webhook_id)? else {
                    return Ok(false);
                };
                rec.deliveries += 1;
                write_hook(hooks, d.webhook_id, &rec)?;
                Trees {
                    records,
                    due,
                    listed,
                }
                .put(d, None)?;
                Ok(true)
            })?;
        Ok(stored)
    }

    /// Finds up to `limit` due deliveries of enabled webhooks in `delivery_due` (removing the
    /// keys of webhooks that are gone), then leases them in one transaction.
    pub(crate) fn claim(
        &self,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<Claimed>, Error> {
        let _one_at_a_time = self
            .claim_lock
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut hooks: HashMap<Uuid, Option<Webhook>> = HashMap::new();
        let mut found: Vec<(Uuid, Webhook)> = Vec::new();
        let end = due_key(&now, Uuid::max());
        for item in self.delivery_due.range(..=&end[..]) {
            if found.len() >= limit as usize {
                break;
            }
            let (key, value) = item?;
            self.touched(1);
            let webhook = crate::record::decode_id("due webhook", &value)?;
            let hook = match hooks.get(&webhook) {
                Some(hook) => hook.clone(),
                None => {
                    let hook = self
                        .hook_rec(webhook)?
                        .map(|rec| rec.into_webhook(webhook))
                        .transpose()?;
                    hooks.insert(webhook, hook.clone());
                    hook
                }
            };
            match hook {
                None => {
                    self.delivery_due.remove(key)?;
                }
                Some(hook) if hook.enabled => {
                    found.push((tree_keys::trailing_id(&key)?, hook));
                }
                Some(_) => {}
            }
        }
        let claimed = (
            &self.deliveries,
            &self.delivery_due,
            &self.webhook_deliveries,
        )
            .transaction(|(records, due, listed)| {
                let trees = Trees {
                    records,
                    due,
                    listed,
                };
                let mut claimed = Vec::with_capacity(found.len());
                for (id, hook) in &found {
                    let Some(old) = trees.get(*id)? else {
                        continue;
                    };
                    if old.status != DeliveryStatus::Pending
                        || old.next_attempt_at.is_none_or(|t| t > now)
                    {
                        continue;
                    }
                    let new = Delivery {
                        attempts: old.attempts.saturating_add(1),
                        next_attempt_at: Some(until),
                        ..old.clone()
                    };
                    trees.put(&new, Some(&old))?;
                    claimed.push(Claimed {
                        delivery: new,
                        url: hook.url.clone(),
                        secret: hook.secret.clone(),
                    });
                }
                Ok(claimed)
            })?;
        Ok(claimed)
    }

    /// Records the attempts in one transaction; answers the webhooks to disable (failing
    /// since `disable_before` or earlier), each with the time of its last attempt.
    pub(crate) fn record(
        &self,
        attempts: &[Attempt],
        disable_before: DateTime<Utc>,
    ) -> Result<Vec<(Uuid, DateTime<Utc>)>, Error> {
        let disable = (
            &self.deliveries,
            &self.delivery_due,
            &self.webhook_deliveries,
            &self.webhooks,
        )
            .transaction(|(records, due, listed, hooks)| {
                let trees = Trees {
                    records,
                    due,
                    listed,
                };
                let mut touched: HashMap<Uuid, (WebhookRec, DateTime<Utc>)> = HashMap::new();
                for attempt in attempts {
                    if let Some(old) = trees.get(attempt.delivery_id)? {
                        trees.put(&old.after(attempt), Some(&old))?;
                    }
                    let rec = match touched.remove(&attempt.webhook_id) {
                        Some((rec, _)) => Some(rec),
                        None => read_hook(hooks, attempt.webhook_id)?,
                    };
                    let Some(mut rec) = rec else {
                        continue;
                    };
                    if attempt.succeeded() {
                        rec.failing_since = None;
                    } else if rec.failing_since.is_none() {
                        rec.failing_since = Some((&attempt.at).into());
                    }
                    touched.insert(attempt.webhook_id, (rec, attempt.at));
                }
                let mut disable = Vec::new();
                for (id, (rec, at)) in &touched {
                    write_hook(hooks, *id, rec)?;
                    let since = rec.failing_since.map(Ts::time).transpose().map_err(abort)?;
                    if rec.enabled && since.is_some_and(|t| t <= disable_before) {
                        disable.push((*id, *at));
                    }
                }
                Ok(disable)
            })?;
        Ok(disable)
    }

    /// One page of a webhook's deliveries from `webhook_deliveries`, newest first; the total
    /// is the webhook's count.
    pub(crate) fn list_deliveries(
        &self,
        webhook: Uuid,
        offset: u64,
        limit: u32,
    ) -> Result<Page<Delivery>, Error> {
        let Some(rec) = self.hook_rec(webhook)? else {
            return Ok(Page {
                items: Vec::new(),
                total: 0,
            });
        };
        let mut items = Vec::new();
        let skip = usize::try_from(offset).unwrap_or(usize::MAX);
        for item in self
            .scan(&self.webhook_deliveries, webhook.as_bytes(), true)
            .skip(skip)
        {
            if items.len() >= limit as usize {
                break;
            }
            let (key, _) = item?;
            let id = tree_keys::trailing_id(&key)?;
            if let Some(v) = self.get(&self.deliveries, id.as_bytes())? {
                items.push(decode::<DeliveryRec>(DeliveryRec::WHAT, &v)?.into_delivery(id)?);
            }
        }
        Ok(Page {
            items,
            total: rec.deliveries,
        })
    }

    pub(crate) fn retry(
        &self,
        webhook: Uuid,
        id: Uuid,
        now: DateTime<Utc>,
    ) -> Result<Option<Delivery>, Error> {
        let retried = (
            &self.deliveries,
            &self.delivery_due,
            &self.webhook_deliveries,
        )
            .transaction(|(records, due, listed)| {
                let trees = Trees {
                    records,
                    due,
                    listed,
                };
                let Some(old) = trees.get(id)?.filter(|d| d.webhook_id == webhook) else {
                    return Ok(None);
                };
                let new = Delivery {
                    status: DeliveryStatus::Pending,
                    next_attempt_at: Some(now),
                    ..old.clone()
                };
                trees.put(&new, Some(&old))?;
                Ok(Some(new))
            })?;
        Ok(retried)
    }

    pub(crate) fn purge_deliveries(&self, before: DateTime<Utc>) -> Result<u64, Error> {
        let mut ids = Vec::new();
        for item in self.webhooks.iter() {
            let (key, _) = item?;
            ids.push(crate::record::decode_id("webhook id", &key)?);
        }
        let mut removed = 0;
        for id in ids {
            removed += self.remove_deliveries_of(id, Some(before))?;
        }
        Ok(removed)
    }
}
