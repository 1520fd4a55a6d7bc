//! Webhooks over HTTP (scope `admin:webhooks`): register, list, read, change and delete
//! them, read their deliveries, retry one, and send a test delivery.

use uuid::Uuid;

use super::access::{in_workspace, named_workspace};
use super::{Service, location};
use crate::error::ApiError;
use crate::events::EventCursor;
use crate::page::AssetPagination;
use crate::query;
use crate::records::now;
use crate::render::{Envelope, data};
use crate::reply::Reply;
use crate::request::RawRequest;
use crate::validate::{self, WebhookDoc};
use crate::webhooks::wire::{DeliveryWire, NewWebhookWire, WebhookWire};
use crate::webhooks::{Delivery, TEST_EVENT_TYPE, Webhook, sign, target};

/// The 404 of a webhook that does not exist.
const NO_WEBHOOK: ApiError = ApiError::NotFound("Webhook not found");

impl Service {
    /// `POST /api/v1/webhooks`: 201 with the webhook, its secret shown this once, and its
    /// `Location`.
    pub(super) async fn post_webhook(
        &self,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let mount = req.mount;
        let body = self.json_body(req).await?;
        let mut doc = validate::webhook_doc(&body)?;
        doc.workspace_id = named_workspace(ws, doc.workspace_id)?;
        let webhook = self.create_webhook(doc).await?;
        Ok(data(
            201,
            NewWebhookWire {
                webhook: WebhookWire::of(&webhook),
                secret: &webhook.secret,
            },
        )
        .with_header("location", location(mount, "webhooks", webhook.id)))
    }

    /// Registers a webhook from a validated body, as `POST /api/v1/webhooks` does, with a new
    /// secret; it receives the events that occur from now on.
    ///
    /// ```
    /// use assetlib_core::validate::webhook_doc;
    /// use assetlib_core::{Config, Service};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let mut config = Config::default();
    /// config.webhook_allow_private = true;
    /// let service = Service::in_memory(config);
    /// let doc = webhook_doc(br#"{"url": "http://127.0.0.1:9000/hooks"}"#)?;
    /// let webhook = service.create_webhook(doc).await?;
    /// assert!(webhook.secret.starts_with("whsec_"));
    /// # Ok::<(), assetlib_core::ApiError>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    /// 400 on `url` when it leads to an address that is not public (unless
    /// [`crate::Config::webhook_allow_private`]) or its host does not resolve; 500 when the
    /// store fails.
    pub async fn create_webhook(&self, doc: WebhookDoc) -> Result<Webhook, ApiError> {
        self.check_target(&doc.url).await?;
        let at = now();
        let webhook = Webhook {
            id: Uuid::new_v4(),
            url: doc.url,
            event_types: doc.event_types,
            enabled: doc.enabled,
            secret: sign::new_secret().map_err(ApiError::internal)?,
            created_at: at,
            updated_at: at,
            failing_since: None,
            workspace_id: doc.workspace_id,
        };
        let log = self.log.in_workspace(webhook.workspace_id.as_deref());
        self.webhook_store()?
            .insert_webhook(webhook.clone(), &log)
            .await?;
        Ok(webhook)
    }

    /// 400 on `url` unless every address its host resolves to may be reached.
    async fn check_target(&self, url: &str) -> Result<(), ApiError> {
        let parsed = target::parse(url).map_err(|e| ApiError::validation("url", e.to_string()))?;
        target::check(&parsed, self.inner.config.webhook_allow_private)
            .await
            .map_err(|e| ApiError::validation("url", e.to_string()))
    }

    /// `GET /api/v1/webhooks?page&per_page`: newest first, without secrets; a workspace
    /// key's (`ws`) alone for a workspace key (paged here, from every webhook: a deployment
    /// has few).
    pub(super) async fn webhook_list(
        &self,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let q = query::page_query(req.query, self.inner.config.max_page_size)?;
        let offset = crate::page::offset(q.page, q.per_page);
        let store = self.webhook_store()?;
        let page = match ws {
            None => store.list_webhooks(offset, q.per_page).await?,
            Some(_) => {
                let all = store.list_webhooks(0, u32::MAX).await?.items;
                let own = all
                    .into_iter()
                    .filter(|w| in_workspace(ws, w.workspace_id.as_deref()))
                    .collect();
                crate::page::of_all(own, q.page, q.per_page)
            }
        };
        let items: Vec<WebhookWire<'_>> = page.items.iter().map(WebhookWire::of).collect();
        Ok(Reply::json_value(
            200,
            &Envelope {
                data: items,
                pagination: Some(AssetPagination::new(q.page, q.per_page, page.total)),
            },
        ))
    }

    /// `GET /api/v1/webhooks/{id}`.
    pub(super) async fn webhook_detail(
        &self,
        id: &str,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let webhook = self.webhook(id, ws).await?;
        Ok(data(200, WebhookWire::of(&webhook)))
    }

    /// `PATCH /api/v1/webhooks/{id}`: `url`, `event_types`, `enabled`; 200 with the webhook.
    pub(super) async fn patch_webhook(
        &self,
        id: &str,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let body = self.json_body(req).await?;
        let current = self.webhook(id, ws).await?;
        let change = validate::webhook_change(&body)?;
        if let Some(url) = &change.url {
            self.check_target(url).await?;
        }
        let log = self.log.in_workspace(current.workspace_id.as_deref());
        let webhook = self
            .webhook_store()?
            .update_webhook(current.id, &change, now(), &log)
            .await?
            .ok_or(NO_WEBHOOK)?;
        Ok(data(200, WebhookWire::of(&webhook)))
    }

    /// `DELETE /api/v1/webhooks/{id}`: 204; its deliveries go with it.
    pub(super) async fn delete_webhook(
        &self,
        id: &str,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let current = self.webhook(id, ws).await?;
        let log = self.log.in_workspace(current.workspace_id.as_deref());
        match self
            .webhook_store()?
            .delete_webhook(current.id, &log)
            .await?
        {
            true => Ok(Reply::empty(204)),
            false => Err(NO_WEBHOOK),
        }
    }

    /// `GET /api/v1/webhooks/{id}/deliveries?page&per_page`: newest first.
    pub(super) async fn delivery_list(
        &self,
        id: &str,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let webhook = self.webhook(id, ws).await?;
        let q = query::page_query(req.query, self.inner.config.max_page_size)?;
        let offset = crate::page::offset(q.page, q.per_page);
        let page = self
            .webhook_store()?
            .list_deliveries(webhook.id, offset, q.per_page)
            .await?;
        let items: Vec<DeliveryWire<'_>> = page.items.iter().map(DeliveryWire::of).collect();
        Ok(Reply::json_value(
            200,
            &Envelope {
                data: items,
                pagination: Some(AssetPagination::new(q.page, q.per_page, page.total)),
            },
        ))
    }

    /// `POST /api/v1/webhooks/{id}/deliveries/{delivery_id}/retry`: the delivery is due at
    /// once (one more attempt, whatever its status); 202 with it.
    pub(super) async fn retry_delivery(
        &self,
        id: &str,
        delivery_id: &str,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let delivery_id = validate::parse_id("delivery_id", delivery_id)?;
        let webhook = self.webhook(id, ws).await?;
        let delivery = self
            .webhook_store()?
            .retry_delivery(webhook.id, delivery_id, now())
            .await?
            .ok_or(ApiError::NotFound("Delivery not found"))?;
        self.inner.deliveries.due_now();
        Ok(data(202, DeliveryWire::of(&delivery)))
    }

    /// `POST /api/v1/webhooks/{id}/test`: sends a `webhook.test` delivery now (enabled or
    /// not, whatever its event types), once, waits for its answer, records it among the
    /// webhook's deliveries and answers 200 with it.
    pub(super) async fn test_webhook(&self, id: &str, ws: Option<&str>) -> Result<Reply, ApiError> {
        let webhook = self.webhook(id, ws).await?;
        let at = now();
        let ping = (Uuid::new_v4(), TEST_EVENT_TYPE, EventCursor::START);
        let mut delivery = Delivery::new(webhook.id, ping, at);
        delivery.attempts = 1;
        let attempt = self
            .inner
            .deliveries
            .attempt(&webhook, &delivery, self.log.actor())
            .await?;
        let delivery = delivery.after(&attempt);
        if !self
            .webhook_store()?
            .insert_delivery(delivery.clone())
            .await?
        {
            return Err(NO_WEBHOOK);
        }
        Ok(data(200, DeliveryWire::of(&delivery)))
    }

    /// The webhook of a path id: 400 when it is not an id, 404 when there is none (of the
    /// workspace `ws` of a workspace key).
    async fn webhook(&self, id: &str, ws: Option<&str>) -> Result<Webhook, ApiError> {
        let id = validate::parse_id("webhook_id", id)?;
        self.webhook_store()?
            .get_webhook(id)
            .await?
            .filter(|w| in_workspace(ws, w.workspace_id.as_deref()))
            .ok_or(NO_WEBHOOK)
    }
}
