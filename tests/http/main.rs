//! The black-box HTTP suite: every endpoint and every contract decision of DESIGN.md §3, over a
//! real TCP listener on 127.0.0.1 and a real HTTP client.
//!
//! Each case is a `pub(crate) async fn case<H: Harness>()` in one of the modules below; it
//! starts a fresh store and server through the harness `H`, so the same cases run unchanged
//! against every adapter. `cases!` lists them once; `suite!` runs the list against one
//! harness. A new adapter adds a file under `harness/` and one `cases!(suite!(...))` line.
//!
//! Every case runs five times: on axum and on warp, each over sled and over PostgreSQL (a
//! cluster the test binary starts itself on 127.0.0.1; `OnPostgres` in `harness/`), and once
//! more on axum over PostgreSQL with `replica_sync = strict` (`OnPostgresStrict`), so both
//! replica modes answer the whole suite alike. The cases of stemmed search run on both
//! adapters over a sled store set to English (`InEnglish`) and on axum over a PostgreSQL one
//! (`OnPostgresInEnglish`).
//!
//! Run: `cargo test --test http` (it needs the default features `axum`, `warp`, `sled` and
//! `openapi`). The ready servers' own tests are `--test server`.

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

mod assets;
mod auth;
mod differential;
mod disguises;
mod etags;
mod events;
mod files;
mod harness;
mod hostile;
mod images;
mod large_uploads;
mod libraries;
mod library_writes;
mod lifecycle;
mod listing;
mod organize;
mod pass_ranges;
mod passes;
mod previews;
mod probe;
mod replace;
mod routing;
mod runaway;
mod search;
mod support;
mod upload_head;
mod uploads;
mod webhooks;
mod websites;
mod workspaces;

/// Every case of the suite, handed to `$then!` after its own arguments.
macro_rules! cases {
    ($then:ident ! ($($args:tt)*)) => {
        $then!($($args)* [
            auth::every_operation_without_a_key_is_401_with_www_authenticate,
            auth::malformed_unknown_revoked_and_expired_keys_are_401,
            auth::the_bearer_scheme_is_case_insensitive,
            auth::every_operation_without_its_scope_is_403_naming_it,
            auth::checks_run_in_order_401_then_403_then_400,
            auth::body_checks_come_after_the_key_and_the_scope,
            auth::image_parameters_are_checked_after_the_credential,
            assets::create_answers_201_with_location_and_the_asset,
            assets::every_type_has_every_field_and_only_its_extras,
            assets::external_videos_get_an_embed_address,
            assets::create_validation_names_each_field,
            assets::titles_count_characters_not_bytes,
            assets::null_optional_fields_and_unknown_fields_are_accepted,
            assets::create_needs_a_json_content_type,
            assets::get_one_asset_404_and_bad_id,
            assets::drafts_are_hidden_from_reads_and_lists,
            assets::concurrent_creates_all_land_with_unique_slugs,
            listing::list_defaults_and_envelope,
            listing::filter_by_type_and_search,
            listing::sort_by_title_ignores_case_and_orders_both_ways,
            listing::a_kept_list_page_outlives_writes_that_leave_it_as_it_is,
            listing::bad_list_parameters_name_the_parameter,
            listing::per_page_is_clamped_and_reported,
            listing::page_past_the_end_is_empty,
            listing::walking_pages_over_tied_assets_never_repeats_or_misses,
            libraries::list_shows_published_libraries_newest_first_with_counts,
            libraries::list_pagination_clamping_and_workspace_filter,
            libraries::detail_without_assets_has_section_counts,
            libraries::detail_with_assets_in_display_order_with_overrides,
            libraries::detail_leaves_out_unpublished_assets,
            libraries::detail_404s_and_bad_ids,
            libraries::unpublished_libraries_are_hidden,
            libraries::concurrent_detail_reads_count_every_view,
            libraries::head_on_a_detail_counts_no_view,
            library_writes::put_creates_201_then_replaces_200,
            library_writes::put_replace_keeps_counters_and_dates,
            library_writes::put_validation_names_the_path,
            library_writes::put_checks_the_assets_it_places,
            library_writes::slugs_are_unique_among_libraries,
            library_writes::delete_answers_204_then_404,
            routing::unknown_routes_are_json_404,
            routing::wrong_methods_are_json_405_with_allow,
            routing::oversized_bodies_are_413,
            routing::oversized_chunked_bodies_are_413,
            routing::bodies_cut_short_are_400,
            routing::head_answers_like_get_without_a_body,
            routing::nested_under_a_prefix_locations_include_it,
            routing::the_openapi_document_is_served_without_a_key,
            files::create_reads_metadata_from_real_files,
            files::file_paths_outside_the_store_or_missing_are_400,
            files::content_of_another_type_is_400,
            files::download_sends_the_file_with_its_headers,
            files::download_ranges_206_and_416,
            etags::etags_are_made_of_the_content,
            files::download_redirects_links_and_404s_without_a_file,
            files::thumbnails_are_made_and_served_publicly,
            files::upload_creates_the_asset_as_create_does,
            files::bad_uploads_leave_no_file_and_no_asset,
            files::uploads_past_the_limit_are_413,
            files::a_2_gib_upload_is_refused_before_its_body,
            files::a_client_that_disconnects_mid_upload_leaves_nothing,
            files::bulk_download_zips_the_library_in_page_order,
            hostile::control_characters_never_reach_a_stored_url,
            hostile::zip_entries_never_climb_out_of_their_folder,
            hostile::no_body_is_read_before_the_key_is_checked,
            hostile::if_range_serves_the_range_only_on_the_same_strong_etag,
            hostile::refused_uploads_leave_no_directory_behind,
            hostile::a_415_names_the_media_type_the_route_takes,
            hostile::a_target_over_64_kib_is_414,
            hostile::a_body_that_stops_arriving_is_408,
            hostile::hostile_pdfs_never_take_the_server_down,
            hostile::thumbnail_names_no_file_can_have_are_json_404,
            lifecycle::patch_merges_fields_and_moves_updated_at_only_on_change,
            lifecycle::patch_validation_names_each_field,
            lifecycle::a_change_shows_in_every_library_on_the_next_read,
            lifecycle::concurrent_patches_never_mix_fields,
            lifecycle::drafts_are_seen_only_by_writers,
            lifecycle::delete_refuses_held_assets_unless_forced,
            lifecycle::usage_lists_the_libraries_newest_first,
            lifecycle::a_delete_racing_a_library_write_ends_consistent,
            replace::a_replaced_file_downloads_new_bytes_under_the_same_id,
            replace::a_failed_replacement_changes_nothing,
            replace::delete_removes_the_files_the_api_stored_and_only_those,
            websites::a_library_reads_by_slug_as_by_id,
            websites::cors_answers_only_allowed_origins,
            websites::signed_links_download_without_a_key,
            websites::a_signed_link_downloads_a_library_zip,
            websites::public_assets_need_no_key,
            websites::json_reads_answer_304_to_a_matching_etag,
            websites::rate_limits_are_per_key,
            workspaces::a_workspace_key_answers_anothers_records_as_missing_ones,
            workspaces::the_walkthrough_mints_a_customer_key_and_a_page_token,
            workspaces::a_global_key_moves_an_asset_to_another_workspace,
            probe::a_download_racing_replacements_and_a_delete_never_fails,
            probe::a_zip_racing_replacements_and_deletes_stays_whole,
            probe::keyless_reads_take_only_the_one_spelling_of_an_id,
            probe::usage_shows_unpublished_libraries_only_to_library_writers,
            probe::shared_caches_never_keep_a_keyed_answer,
            probe::keyless_requests_share_a_budget_per_client_address,
            probe::thumbnails_have_names_nobody_can_guess,
            probe::a_rotated_signing_secret_revokes_every_link,
            passes::the_paid_file_matrix,
            passes::a_file_is_paid_only_where_the_rule_says,
            passes::passes_are_made_listed_read_and_revoked,
            passes::bad_pass_bodies_name_the_field,
            passes::every_bad_pass_looks_the_same,
            passes::links_minted_with_a_pass_follow_the_pass,
            passes::concurrent_downloads_spend_exactly_the_limit,
            pass_ranges::ranges_cannot_get_around_a_pass_download_limit,
            pass_ranges::a_download_resumed_after_a_break_is_one_download,
            previews::videos_read_their_facts_from_the_container,
            previews::a_poster_frame_is_drawn_by_the_configured_ffmpeg,
            previews::an_ffmpeg_that_hangs_is_killed_at_the_deadline,
            previews::an_ffmpeg_that_writes_much_to_its_error_output_still_gives_its_frame,
            previews::a_thumbnail_is_made_anew_on_request,
            previews::hostile_videos_are_created_without_facts_or_a_thumbnail,
            images::variants_are_made_once_kept_and_served_by_their_etag,
            images::bad_requests_for_variants_say_what_is_wrong,
            images::presets_of_public_assets_and_signed_links_need_no_key,
            images::a_replaced_or_deleted_file_takes_its_variants_along,
            images::many_asking_at_once_get_one_making,
            images::past_the_workers_and_the_queue_the_answer_is_503,
            images::large_variants_of_paid_files_need_what_downloads_need,
            images::hostile_sources_give_a_variant_or_a_400,
            runaway::runaway_pdfs_are_stored_without_a_page_and_their_variants_refused,
            runaway::a_variant_render_keeps_its_worker_after_the_client_hangs_up,
            events::writes_are_events_with_their_key_in_order,
            events::bad_feed_parameters_are_400_naming_them,
            events::cursors_the_feed_never_handed_out_are_400,
            assets::a_write_of_one_asset_leaves_the_others_kept,
            webhooks::webhooks_are_registered_read_changed_and_deleted,
            webhooks::private_and_non_http_targets_are_400_on_url,
            disguises::ipv4_in_ipv6_spellings_and_port_0_are_400_on_url,
            webhooks::deliveries_are_signed_as_the_reference_library_verifies,
            webhooks::failing_endpoints_are_retried_and_never_hold_up_writes,
            webhooks::a_failing_endpoint_is_disabled_and_a_delivery_retried_by_hand,
            workspaces::a_workspace_keys_feed_and_webhooks_see_its_events_alone,
            uploads::a_resumable_upload_makes_the_asset_an_upload_would,
            uploads::uploads_wait_in_multipart_uploads_and_in_pieces,
            uploads::creation_with_upload_and_termination,
            uploads::bad_input_gets_its_tus_status_and_keeps_nothing_invalid,
            uploads::a_second_writer_is_423_while_the_first_writes,
            uploads::racing_writers_never_corrupt_the_offset,
            uploads::tus_headers_pass_cors,
            uploads::unfinished_uploads_expire_and_are_removed,
            upload_head::head_answers_the_metadata_the_upload_was_made_with,
            large_uploads::every_type_may_be_uploaded_past_max_upload,
            large_uploads::a_large_file_named_by_file_path_is_read_by_ranges,
            large_uploads::a_413_names_the_limit_that_applies,
            search::hits_rank_by_field_with_snippets_and_pages,
            search::slides_and_web_pages_are_searched_by_slide,
            search::drafts_and_paid_text_need_their_scopes,
            search::search_filters_and_pages,
            search::every_answered_write_is_found_by_the_next_search,
            search::bad_searches_are_400_naming_the_parameter,
            organize::tags_are_kept_on_create_upload_patch_and_every_asset_object,
            organize::tag_filters_and_the_tag_list,
            organize::checksums_are_the_sha256_of_the_stored_bytes,
            organize::duplicates_are_rejected_or_reused_on_upload_and_tus,
            organize::bulk_changes_item_by_item_or_all_at_once,
            organize::racing_bulk_changes_lose_no_tag,
            disguises::tags_with_invisible_characters_are_400,
            uploads::direct_uploads_need_files_in_s3,
        ]);
    };
}

/// Runs `cases` against `$harness` as tests of module `$name`.
macro_rules! suite {
    ($harness:ty => $name:ident [$($module:ident :: $case:ident),* $(,)?]) => {
        mod $name {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    crate::$module::$case::<$harness>().await;
                }
            )*
        }
    };
}

cases!(suite!(crate::harness::axum::Axum => axum));
cases!(suite!(crate::harness::warp::Warp => warp));
cases!(suite!(crate::harness::OnPostgres<crate::harness::axum::Axum> => axum_postgres));
cases!(suite!(crate::harness::OnPostgres<crate::harness::warp::Warp> => warp_postgres));
cases!(
    suite!(crate::harness::OnPostgresStrict<crate::harness::axum::Axum> => axum_postgres_strict)
);

/// The cases of a store whose search stems words in English: on both adapters over sled, and
/// on axum over PostgreSQL.
macro_rules! stemmed_cases {
    ($then:ident ! ($($args:tt)*)) => {
        $then!($($args)* [
            search::stemmed_searches_find_every_form_of_a_word,
        ]);
    };
}

stemmed_cases!(suite!(crate::harness::InEnglish<crate::harness::axum::Axum> => axum_english));
stemmed_cases!(suite!(crate::harness::InEnglish<crate::harness::warp::Warp> => warp_english));
stemmed_cases!(
    suite!(crate::harness::OnPostgresInEnglish<crate::harness::axum::Axum> => axum_postgres_english)
);
