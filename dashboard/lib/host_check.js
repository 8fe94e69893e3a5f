'use strict';
// The dashboard answers only requests whose Host header names it: a
// loopback name, the address or name it listens on, or a name given with
// --allowed-host (a reverse proxy's). A web page elsewhere that points a
// name of its own at the dashboard's address (DNS rebinding) sends that
// name, and is refused: its script cannot read the API from a browser
// that reaches the dashboard.
const net = require('node:net');

// The host of a Host header or a name as URL gives it (lower case, an
// IPv6 address in brackets, an IPv4 address in dotted quads), without the
// port; null if it is not a bare host[:port].
function hostName(text) {
  if (typeof text !== 'string' || text === '') return null;
  const bare = net.isIPv6(text) ? `[${text}]` : text;
  let url;
  try {
    url = new URL(`http://${bare}`);
  } catch {
    return null;
  }
  if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) return null;
  return url.hostname;
}

// 127.0.0.0/8, ::1 and 127.0.0.0/8 mapped into IPv6, as URL writes them
function isLoopback(name) {
  return name === 'localhost' || /^127\.[0-9.]+$/.test(name) || name === '[::1]' ||
    /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(name);
}

// An address that means every address of the machine names no host.
const WILDCARDS = new Set(['0.0.0.0', '[::]']);

// The names a dashboard listening on listenHost answers to, besides the
// loopback names: that host, and the names allowed by --allowed-host.
function allowedHosts(listenHost, extra = []) {
  const names = new Set();
  for (const text of [listenHost, ...extra]) {
    const name = hostName(text);
    if (name !== null && !WILDCARDS.has(name)) names.add(name);
  }
  return names;
}

// Whether a request with this Host header may be answered.
function hostAllowed(allowed, header) {
  const name = hostName(header);
  return name !== null && (isLoopback(name) || allowed.has(name));
}

module.exports = { allowedHosts, hostAllowed, hostName };
