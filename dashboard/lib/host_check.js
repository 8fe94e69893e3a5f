'use strict';
// A dashboard listening on a loopback address answers only requests whose
// Host header names this machine: a web page elsewhere that points a name
// of its own at 127.0.0.1 (DNS rebinding) would otherwise read the API
// from the user's browser.

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

function isLoopback(host) {
  return LOOPBACK_NAMES.has(host) || /^127\.[0-9.]+$/.test(host);
}

// The host name of a Host header, without its port.
function hostName(header) {
  if (!header) return '';
  if (header.startsWith('[')) return header.slice(0, header.indexOf(']') + 1);
  return header.split(':')[0];
}

// Whether a request with this Host header may be answered by a dashboard
// listening on listenHost.
function hostAllowed(listenHost, header) {
  if (!isLoopback(listenHost)) return true;
  return isLoopback(hostName(header).toLowerCase());
}

module.exports = { hostAllowed };
