//! Organizing assets (DESIGN.md §5 "Tags, checksums, bulk changes"): the tag list
//! (`GET /api/v1/tags`), bulk changes (`POST /api/v1/assets/bulk`) and what an upload does
//! with bytes an asset has already (`on_duplicate`).

use std::collections::HashMap;

use serde::Serialize;
use uuid::Uuid;

use super::Service;
use super::access::in_workspace;
use crate::change::{BulkOutcome, BulkRefusal};
use crate::error::ApiError;
use crate::model::{Asset, TagCount};
use crate::query::{self, AssetQuery, AssetSort, AssetStatus, SortOrder};
use crate::records::now;
use crate::render::{AssetJson, data};
use crate::reply::Reply;
use crate::request::RawRequest;
use crate::validate::{self, BulkAction, BulkDoc, OnDuplicate};

/// The most tags `GET /api/v1/tags` lists, and how many it lists without `limit`.
const TAGS_MAX: u32 = 1000;
const TAGS_DEFAULT: u32 = 100;

/// What one asset of a bulk change came to.
#[derive(Debug)]
pub struct BulkItem {
    /// The asset's id.
    pub id: Uuid,
    /// The asset as changed (`None` for a delete, or when it failed).
    pub asset: Option<Asset>,
    /// Why it failed (`None` when it did not). In an atomic change that failed, the assets
    /// that stopped it have their error and every other one [`ApiError::NotApplied`].
    pub error: Option<ApiError>,
    /// The status a single request for this asset would have answered.
    pub status: u16,
}

impl BulkItem {
    fn done(id: Uuid, asset: Option<Asset>) -> Self {
        let status = if asset.is_some() { 200 } else { 204 };
        BulkItem {
            id,
            asset,
            error: None,
            status,
        }
    }

    fn failed(id: Uuid, error: ApiError) -> Self {
        BulkItem {
            id,
            asset: None,
            status: error.status(),
            error: Some(error),
        }
    }
}

/// What a bulk change did, item by item, in the order of its ids.
#[derive(Debug)]
pub struct BulkResult {
    /// The action's name.
    pub action: &'static str,
    /// Whether it was all or nothing.
    pub atomic: bool,
    /// One per id.
    pub items: Vec<BulkItem>,
}

impl BulkResult {
    /// Items that changed.
    pub fn succeeded(&self) -> usize {
        self.items.iter().filter(|i| i.error.is_none()).count()
    }
}

impl Service {
    /// `GET /api/v1/tags`: the tags of published assets with their counts, most used first;
    /// `limit` (1 to 1000, default 100) of them.
    pub(super) async fn tags_request(
        &self,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let limit = query::limit_query(req.query, TAGS_DEFAULT, TAGS_MAX)?;
        let tags = match ws {
            None => self.list_tags(limit).await?,
            Some(ws) => self.inner.store.list_workspace_tags(ws, limit).await?,
        };
        Ok(data(200, tags))
    }

    /// The tags of published assets, each with how many published assets have it (tags
    /// compared ignoring case, named in lower case), most used first, then by name; at most
    /// `limit`.
    ///
    /// # Errors
    /// 500 when the store fails.
    pub async fn list_tags(&self, limit: u32) -> Result<Vec<TagCount>, ApiError> {
        Ok(self.inner.store.list_tags(limit).await?)
    }

    /// `POST /api/v1/assets/bulk`: 200 with a result per id, in order; an atomic change that
    /// one asset stopped is 409 with the same results, and changed nothing.
    pub(super) async fn bulk_request(
        &self,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let body = self.json_body(req).await?;
        let mut doc = validate::bulk_doc(&body, &self.inner.config)?;
        // A workspace key's ids of other workspaces go to the store as ids of no asset, so
        // each is answered exactly as a missing one, and named again in the results.
        let hidden = self.hide_foreign(&mut doc.ids, ws).await?;
        let mut result = self.bulk_assets(doc).await?;
        for item in &mut result.items {
            if let Some(&id) = hidden.get(&item.id) {
                item.id = id;
            }
        }
        let wire = BulkWire::of(&result);
        if result.atomic && result.succeeded() < result.items.len() {
            let stopped = result
                .items
                .iter()
                .filter(|i| {
                    i.error
                        .as_ref()
                        .is_some_and(|e| !matches!(e, ApiError::NotApplied))
                })
                .count();
            let message = format!(
                "Nothing was changed: {stopped} of the {} assets could not take the change",
                result.items.len()
            );
            return Ok(Reply::json_value(
                409,
                &serde_json::json!({
                    "error": "Conflict",
                    "message": message,
                    "results": wire,
                }),
            ));
        }
        Ok(data(200, wire))
    }

    /// Runs a bulk change. Each asset is changed as its own request would change it (a
    /// delete of an asset libraries hold is a 409 item unless `force`; an unknown id a 404
    /// item), one after another; with `atomic`, all in one store change, or none of them.
    /// Each asset changed logs its own event; caches and libraries show the changes on their
    /// next read.
    ///
    /// # Errors
    /// 500 when the store fails (an atomic change then changed nothing; a change that is not
    /// atomic keeps what it did before).
    pub async fn bulk_assets(&self, doc: BulkDoc) -> Result<BulkResult, ApiError> {
        let action = doc.action.name();
        let items = if doc.atomic {
            self.bulk_atomic(&doc).await?
        } else {
            self.bulk_each(&doc).await?
        };
        Ok(BulkResult {
            action,
            atomic: doc.atomic,
            items,
        })
    }

    /// A bulk change asset by asset.
    async fn bulk_each(&self, doc: &BulkDoc) -> Result<Vec<BulkItem>, ApiError> {
        let store = &self.inner.store;
        let change = doc.action.change(now());
        let mut items = Vec::with_capacity(doc.ids.len());
        for &id in &doc.ids {
            let outcome = match (&doc.action, &change) {
                (BulkAction::Delete { force }, _) => {
                    self.delete_asset(id, *force).await.map(|()| None)
                }
                (_, Some(change)) => match store.update_asset(id, change, &self.log).await {
                    Ok(Some(done)) => Ok(Some(done.after)),
                    Ok(None) => Err(ApiError::AssetNotFound),
                    Err(e) => Err(e.into()),
                },
                (_, None) => Err(ApiError::AssetNotFound),
            };
            items.push(match outcome {
                Ok(asset) => BulkItem::done(id, asset),
                Err(e) if e.status() >= 500 => return Err(e),
                Err(e) => BulkItem::failed(id, e),
            });
        }
        Ok(items)
    }

    /// A bulk change in one store change.
    async fn bulk_atomic(&self, doc: &BulkDoc) -> Result<Vec<BulkItem>, ApiError> {
        let store = &self.inner.store;
        let refused = match (&doc.action, doc.action.change(now())) {
            (BulkAction::Delete { force }, _) => {
                match store.delete_assets(&doc.ids, *force, &self.log).await? {
                    BulkOutcome::Done(gone) => {
                        for asset in &gone {
                            self.remove_replaced(asset, None).await;
                        }
                        return Ok(doc.ids.iter().map(|&id| BulkItem::done(id, None)).collect());
                    }
                    BulkOutcome::Refused(refused) => refused,
                }
            }
            (_, Some(change)) => match store.update_assets(&doc.ids, &change, &self.log).await? {
                BulkOutcome::Done(done) => {
                    return Ok(done
                        .into_iter()
                        .map(|u| BulkItem::done(u.after.id, Some(u.after)))
                        .collect());
                }
                BulkOutcome::Refused(refused) => refused,
            },
            (_, None) => Vec::new(),
        };
        Ok(doc
            .ids
            .iter()
            .map(|&id| match refused.iter().find(|(r, _)| *r == id) {
                Some((_, why)) => BulkItem::failed(id, refusal_error(why.clone())),
                None => BulkItem::failed(id, ApiError::NotApplied),
            })
            .collect())
    }

    /// Replaces each of `ids` that is an asset of a workspace other than `seen` (when the
    /// caller is bound to one) with a new id of no asset; returns the original of each
    /// replacement.
    async fn hide_foreign(
        &self,
        ids: &mut [Uuid],
        seen: Option<&str>,
    ) -> Result<HashMap<Uuid, Uuid>, ApiError> {
        let mut hidden = HashMap::new();
        if seen.is_none() {
            return Ok(hidden);
        }
        let found = self.assets_by_id(ids).await?;
        for id in ids.iter_mut() {
            if found
                .get(id)
                .is_some_and(|a| !in_workspace(seen, a.workspace_id.as_deref()))
            {
                let stand_in = Uuid::new_v4();
                hidden.insert(stand_in, *id);
                *id = stand_in;
            }
        }
        Ok(hidden)
    }

    /// The oldest asset whose file has `checksum`, published or not, if any: of `workspace`,
    /// or of any without one; with `exact`, of none without one.
    pub(super) async fn asset_with_checksum(
        &self,
        checksum: [u8; 32],
        workspace: Option<&str>,
        exact: bool,
    ) -> Result<Option<Asset>, ApiError> {
        let mut query = AssetQuery {
            per_page: if exact {
                self.inner.config.max_page_size
            } else {
                1
            },
            status: AssetStatus::Any,
            sort: AssetSort::CreatedAt,
            order: SortOrder::Asc,
            checksum: Some(checksum),
            workspace_id: workspace.map(str::to_owned),
            ..AssetQuery::default()
        };
        loop {
            let page = self.inner.store.list_assets(&query).await?;
            let last = page.items.len() < query.per_page as usize;
            let wanted = |a: &Asset| !exact || a.workspace_id.as_deref() == workspace;
            if let Some(found) = page.items.into_iter().find(wanted) {
                return Ok(Some(found));
            }
            if last {
                return Ok(None);
            }
            query.page += 1;
        }
    }

    /// What an upload of a file with `checksum` into `workspace` does under `on_duplicate`:
    /// `Ok(None)` to store it as a new asset, `Ok(Some(asset))` to answer with the asset of
    /// the workspace (of any, for none) that has the same bytes (`reuse`), 409 naming it
    /// (`reject`).
    pub(super) async fn on_duplicate(
        &self,
        on_duplicate: OnDuplicate,
        checksum: Option<[u8; 32]>,
        workspace: Option<&str>,
    ) -> Result<Option<Asset>, ApiError> {
        let Some(checksum) = checksum.filter(|_| on_duplicate != OnDuplicate::Allow) else {
            return Ok(None);
        };
        match (
            on_duplicate,
            self.asset_with_checksum(checksum, workspace, false).await?,
        ) {
            (_, None) | (OnDuplicate::Allow, _) => Ok(None),
            (OnDuplicate::Reject, Some(asset)) => Err(ApiError::Duplicate { asset_id: asset.id }),
            (OnDuplicate::Reuse, Some(asset)) => Ok(Some(asset)),
        }
    }
}

/// The error a refused item of an atomic change reads.
fn refusal_error(why: BulkRefusal) -> ApiError {
    match why {
        BulkRefusal::NotFound => ApiError::AssetNotFound,
        BulkRefusal::Refused(reason) => reason.into(),
        BulkRefusal::InUse(libraries) => super::lifecycle::in_use(libraries),
    }
}

/// A bulk result on the wire.
#[derive(Serialize)]
struct BulkWire<'a> {
    action: &'static str,
    atomic: bool,
    succeeded: usize,
    failed: usize,
    results: Vec<ItemWire<'a>>,
}

/// One item on the wire: `id`, `status`, and `asset` (a patch or tag change) or `error` (the
/// error body a single request would have read).
#[derive(Serialize)]
struct ItemWire<'a> {
    id: Uuid,
    status: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    asset: Option<AssetJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<serde_json::Value>,
}

impl<'a> BulkWire<'a> {
    fn of(result: &'a BulkResult) -> Self {
        let succeeded = result.succeeded();
        BulkWire {
            action: result.action,
            atomic: result.atomic,
            succeeded,
            failed: result.items.len() - succeeded,
            results: result
                .items
                .iter()
                .map(|item| ItemWire {
                    id: item.id,
                    status: item.status,
                    asset: item.asset.as_ref().map(AssetJson),
                    error: item.error.as_ref().map(ApiError::body),
                })
                .collect(),
        }
    }
}
