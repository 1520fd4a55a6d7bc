-- wrk script for benches/load.sh: durable asset creates.
-- Every request POSTs one new pdf asset; the key comes from the environment (ASSETLIB_KEY).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. (os.getenv("ASSETLIB_KEY") or "")
wrk.body = '{"title":"Load test asset","asset_type":"pdf","description":"Created by benches/load.sh"}'
