//! The bulk change's and the tag list's answers against their schemas, rendered by a real
//! service in memory.

use serde_json::Value;
use uuid::Uuid;

use super::document;
use super::wire_tests::{assert_shape, component, keys};
use crate::model::Scope;

/// Asserts that `value` has the required properties of `schema` and no other than its
/// properties (for objects whose fields depend on the case: a bulk result's items).
fn assert_within(value: &Value, schema: &Value, what: &str) {
    let properties = keys(&schema["properties"]);
    let present = keys(value);
    assert!(
        present.is_subset(&properties),
        "{what}: {present:?} not within {properties:?}"
    );
    for name in schema["required"].as_array().expect("required") {
        let name = name.as_str().expect("a name");
        assert!(present.contains(name), "{what}: no {name}");
    }
}

/// Bulk changes and the tag list, answered by a service: their bodies have the fields of
/// their schemas.
#[test]
fn bulk_results_and_the_tag_list_have_the_fields_of_their_schemas() {
    use crate::routes::Operation;
    use crate::{Config, RawRequest, Service};

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let doc = document();
        let service = Service::in_memory(Config::default());
        let (_, key) = service
            .create_key("openapi", vec![Scope::ReadAssets, Scope::WriteAssets], None)
            .await
            .expect("a key");
        let auth = format!("Bearer {key}");
        let call = |op: Operation, body: Value| {
            let (service, auth) = (service.clone(), auth.clone());
            async move {
                let reply = service
                    .handle(
                        op,
                        &[],
                        RawRequest {
                            authorization: Some(auth.as_bytes()),
                            content_type: (!body.is_null())
                                .then_some(b"application/json".as_slice()),
                            body: if body.is_null() {
                                Vec::new().into()
                            } else {
                                body.to_string().into_bytes().into()
                            },
                            ..RawRequest::default()
                        },
                    )
                    .await;
                let json: Value = serde_json::from_slice(&reply.body).expect("JSON");
                (reply.status, json)
            }
        };
        let mut ids = Vec::new();
        for (title, tags) in [("A", ["Logo", "brand"]), ("B", ["logo", "print"])] {
            let (status, made) = call(
                Operation::CreateAsset,
                serde_json::json!({"title": title, "asset_type": "link",
                    "external_url": "https://example.com/", "tags": tags}),
            )
            .await;
            assert_eq!(status, 201, "{made}");
            ids.push(made["data"]["id"].as_str().expect("an id").to_owned());
        }
        let unknown = Uuid::from_u128(42).to_string();
        let item_schema = component(&doc, "BulkItemResult");
        let statuses = item_schema["properties"]["status"]["enum"].clone();
        let check_items = |result: &Value| {
            for item in result["results"].as_array().expect("results") {
                assert_within(item, &item_schema, "BulkItemResult");
                assert!(
                    statuses
                        .as_array()
                        .is_some_and(|s| s.contains(&item["status"])),
                    "{item}"
                );
                match item["status"].as_u64() {
                    Some(200) => assert_shape(
                        &item["asset"],
                        &component(&doc, "LinkAsset"),
                        "BulkItemResult.asset",
                    ),
                    Some(204) => assert!(item.get("error").is_none()),
                    Some(404) => assert_shape(&item["error"], &component(&doc, "Error"), "404"),
                    Some(424) => {
                        assert_eq!(item["error"]["error"], "Not applied");
                        assert_shape(&item["error"], &component(&doc, "Error"), "424")
                    }
                    Some(_) => {
                        assert_shape(&item["error"], &component(&doc, "ValidationError"), "424")
                    }
                    None => panic!("no status: {item}"),
                }
            }
        };

        // Not atomic: 200, the unknown id a 404 item.
        let body = serde_json::json!({"action": "add_tags", "ids": [ids[0], ids[1], unknown],
            "changes": {"tags": ["2026"]}});
        let (status, answer) = call(Operation::BulkAssets, body).await;
        assert_eq!(status, 200, "{answer}");
        assert_shape(
            &answer,
            &component(&doc, "BulkResultEnvelope"),
            "BulkResultEnvelope",
        );
        assert_shape(
            &answer["data"],
            &component(&doc, "BulkResult"),
            "BulkResult",
        );
        check_items(&answer["data"]);

        // Atomic: 409, the other items 424.
        let body = serde_json::json!({"action": "patch", "ids": [ids[0], unknown],
            "changes": {"published": false}, "atomic": true});
        let (status, answer) = call(Operation::BulkAssets, body).await;
        assert_eq!(status, 409, "{answer}");
        assert_shape(&answer, &component(&doc, "BulkConflict"), "BulkConflict");
        assert_shape(
            &answer["results"],
            &component(&doc, "BulkResult"),
            "BulkResult",
        );
        check_items(&answer["results"]);

        // The tags, then a delete: its items have no asset.
        let (status, answer) = call(Operation::ListTags, Value::Null).await;
        assert_eq!(status, 200, "{answer}");
        assert_shape(&answer, &component(&doc, "TagList"), "TagList");
        assert_shape(&answer["data"][0], &component(&doc, "TagCount"), "TagCount");
        assert_eq!(
            answer["data"][0],
            serde_json::json!({"tag": "2026", "count": 2})
        );

        let body = serde_json::json!({"action": "delete", "ids": [ids[0], ids[1]]});
        let (status, answer) = call(Operation::BulkAssets, body).await;
        assert_eq!(status, 200, "{answer}");
        assert_shape(
            &answer["data"],
            &component(&doc, "BulkResult"),
            "BulkResult",
        );
        check_items(&answer["data"]);
    });
}
