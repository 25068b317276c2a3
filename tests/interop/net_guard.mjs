// Preloaded (`node --import`) into every Pi CLI run of the interop tests: any attempt to
// reach a host other than this machine's loopback is refused before a packet leaves, and
// written to $PI_INTEROP_NET_LOG so the test fails. DNS lookups of other names are refused
// the same way (the CLI must not even resolve pi.dev, github.com or a provider's host).

import { appendFileSync } from "node:fs";
import dns from "node:dns";
import net from "node:net";

const LOG = process.env.PI_INTEROP_NET_LOG;
const LOCAL = new Set(["127.0.0.1", "::1", "localhost", "::ffff:127.0.0.1"]);

function refuse(what) {
  if (LOG) appendFileSync(LOG, `${what}\n`);
  const error = new Error(`interop net guard: refused ${what}`);
  error.code = "ECONNREFUSED";
  return error;
}

function allowed(host) {
  return host === undefined || host === null || LOCAL.has(String(host)) || /^127\./.test(String(host));
}

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function guardedConnect(...args) {
  let options = args[0];
  if (Array.isArray(options)) options = options[0]; // internal normalized form
  let host;
  let path;
  if (options !== null && typeof options === "object") {
    host = options.host;
    path = options.path;
  } else if (typeof options === "number" || (typeof options === "string" && /^\d+$/.test(options))) {
    host = typeof args[1] === "string" ? args[1] : undefined;
  } else if (typeof options === "string") {
    path = options;
  }
  if (path === undefined && !allowed(host)) {
    const error = refuse(`connect to ${host}`);
    process.nextTick(() => this.destroy(error));
    return this;
  }
  return connect.apply(this, args);
};

function guardLookup(original) {
  return function guardedLookup(hostname, ...rest) {
    if (!allowed(hostname)) {
      const callback = rest.find((x) => typeof x === "function");
      const error = refuse(`DNS lookup of ${hostname}`);
      if (callback) {
        process.nextTick(() => callback(error));
        return {};
      }
      throw error;
    }
    return original.call(this, hostname, ...rest);
  };
}

dns.lookup = guardLookup(dns.lookup);
const promiseLookup = dns.promises.lookup;
dns.promises.lookup = async (hostname, ...rest) => {
  if (!allowed(hostname)) throw refuse(`DNS lookup of ${hostname}`);
  return promiseLookup(hostname, ...rest);
};
