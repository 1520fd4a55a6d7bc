-- wrk script for benches/load.sh: durable asset creates.
-- Every request POSTs one new pdf asset with a title of its own (wrk thread and request
-- number), as a busy team's creates would be; the key comes from the environment
-- (ASSETLIB_KEY).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. (os.getenv("ASSETLIB_KEY") or "")

local threads = 0
function setup(thread)
    threads = threads + 1
    thread:set("thread_id", threads)
end

local n = 0
function request()
    n = n + 1
    local body = string.format(
        '{"title":"Load test asset %d-%d","asset_type":"pdf","description":"Created by benches/load.sh"}',
        thread_id or 0, n)
    return wrk.format(nil, nil, nil, body)
end
