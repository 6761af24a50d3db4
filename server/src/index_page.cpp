// SPDX-License-Identifier: MIT
// GET / — a static page of about 4 KiB (the size of a small real page), describing the server.
#include "router.hpp"

namespace pools::server::detail {

namespace {
constexpr std::string_view page = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>pools: one HTTP server, four ways to wait</title>
<style>
  body { font-family: system-ui, sans-serif; max-width: 46em; margin: 2em auto; padding: 0 1em;
         line-height: 1.5; color: #1d1d1f; background: #fbfbfd; }
  h1 { font-size: 1.6em; margin-bottom: 0.2em; }
  p.lead { color: #555; margin-top: 0; }
  table { border-collapse: collapse; width: 100%; margin: 1em 0; }
  th, td { text-align: left; padding: 0.35em 0.6em; border-bottom: 1px solid #ddd; vertical-align: top; }
  th { background: #f0f0f4; }
  code { font-family: ui-monospace, monospace; font-size: 0.95em; background: #f0f0f4;
         padding: 0 0.25em; border-radius: 3px; }
  footer { margin-top: 2em; font-size: 0.9em; color: #777; }
</style>
</head>
<body>
<h1>pools: one HTTP server, four ways to wait</h1>
<p class="lead">The protocol, the routes and the handlers are shared; only the driver that owns
the connections differs. Each driver waits in the style of its pool: futures hand requests to a
pool (half-sync/half-async), fibers block a fiber per connection, coroutines suspend a coroutine
per connection, and the reactor runs callbacks.</p>

<h2>Endpoints</h2>
<table>
<tr><th>Request</th><th>Answer</th></tr>
<tr><td><code>GET /plaintext</code></td><td><code>Hello, World!</code> as in the TechEmpower benchmark.</td></tr>
<tr><td><code>GET /json</code></td><td><code>{"message":"Hello, World!"}</code></td></tr>
<tr><td><code>GET /</code></td><td>This page.</td></tr>
<tr><td><code>GET /static/&lt;path&gt;</code></td><td>A file below <code>--root</code>, streamed in
pieces; anything that would leave the root is 404.</td></tr>
<tr><td><code>GET /fib?n=N</code></td><td>fib(N) for N in 0..35, computed with the pool's own
fork-join: CPU-bound and parallel.</td></tr>
<tr><td><code>GET /busy?ms=M</code></td><td>Spins M ms on a worker (default: a random 10 to 20 ms).</td></tr>
<tr><td><code>GET /sleep?ms=M</code></td><td>Waits M ms without holding a thread where the model
allows it; the worker model blocks a worker, and the numbers show what that costs.</td></tr>
<tr><td><code>POST /echo</code></td><td>The request body back (Content-Length or chunked).</td></tr>
<tr><td><code>GET /stats</code></td><td>Connection, request and pool counters as JSON.</td></tr>
</table>

<h2>Protocol</h2>
<p>HTTP/1.1 with keep-alive and pipelining (responses in request order), HTTP/1.0, and
<code>Connection: close</code>. <code>HEAD</code> works wherever <code>GET</code> does.
Limits answer with a status rather than a hang: a malformed request is 400, a header section over
8 KiB is 431, a URI over 8 KiB is 414, a body over <code>--max-body</code> is 413, an ambiguous
body length is 400, an unknown method is 501, a slow header is 408, and a connection over the cap
is 503.</p>
<p>On SIGINT or SIGTERM the server stops accepting, lets the requests in flight finish, closes
idle connections, and exits with status 0 within its shutdown deadline.</p>

<h2>Try it</h2>
<table>
<tr><th>Command</th><th>What it shows</th></tr>
<tr><td><code>curl -i http://127.0.0.1:8080/plaintext</code></td><td>The headers every response
carries: Server, Date, Content-Type and Content-Length.</td></tr>
<tr><td><code>curl --data-binary @file http://127.0.0.1:8080/echo</code></td><td>A body streamed
in and back; add <code>-H 'Transfer-Encoding: chunked'</code> for a chunked upload.</td></tr>
<tr><td><code>curl 'http://127.0.0.1:8080/fib?n=30'</code></td><td>A parallel fork-join per
request; compare the drivers with <code>wrk</code>.</td></tr>
<tr><td><code>wrk -t1 -c64 -d10s http://127.0.0.1:8080/plaintext</code></td><td>Requests per
second on one keep-alive connection per wrk slot, as the bench in <code>bench/http/</code> runs it.</td></tr>
</table>

<footer>Served by the pools server core: Boost.Beast parses, the driver waits.</footer>
</body>
</html>
)html";
}  // namespace

std::string_view index_page() noexcept {
  return page;
}

}  // namespace pools::server::detail
