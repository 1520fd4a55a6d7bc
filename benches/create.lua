-- wrk script for benches/load.sh: durable asset creates.
-- Every request POSTs one new pdf asset with a title of its own (wrk thread and request
-- number), as a busy team's creates would be; with CREATE_TITLE set, every asset has that
-- title instead (one title for all: each create after the first takes a numbered slug). The
-- key comes from the environment (ASSETLIB_KEY).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. (os.getenv("ASSETLIB_KEY") or "")

local threads = 0
function setup(thread)
    threads = threads + 1
    thread:set("thread_id", threads)
end

local title = os.getenv("CREATE_TITLE") or ""
local n = 0
function request()
    n = n + 1
    local name = title
    if name == "" then
        name = string.format("Load test asset %d-%d", thread_id or 0, n)
    end
    local body = string.format(
        '{"title":"%s","asset_type":"pdf","description":"Created by benches/load.sh"}', name)
    return wrk.format(nil, nil, nil, body)
end
