-- bench/http/pipeline.lua — wrk sends DEPTH requests back to back on each connection (HTTP/1.1
-- pipelining, as TechEmpower's plaintext test does); wrk counts every response.
--   wrk -s pipeline.lua http://127.0.0.1:8080 -- 16 /plaintext
local depth = 16
local path = "/plaintext"

init = function(args)
  depth = tonumber(args[1]) or depth
  path = args[2] or path
  local requests = {}
  for i = 1, depth do
    requests[i] = wrk.format("GET", path)
  end
  batch = table.concat(requests)
end

request = function()
  return batch
end
