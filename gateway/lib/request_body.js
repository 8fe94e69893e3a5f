'use strict';
// Reading a request's body with a limit, for both protocols' handlers.
//
// A declared or actual size over the limit is refused without keeping more
// than the limit: the error (made by tooLarge) carries closeConnection,
// and the rest of the body is not kept.  After the answer to such a
// request the connection is closed with lingeringClose: what the client
// still sends is read and thrown away for a moment first, as closing a
// socket with bytes unread would reset it and lose the answer on its way.

const LINGER_MS = 2000;

// The body as a Buffer, at most maxBytes of it.
function readBody(req, maxBytes, tooLarge) {
  return new Promise((resolve, reject) => {
    let settled = false;
    const refuse = (err) => {
      if (settled) return;
      settled = true;
      req.pause();
      reject(err);
    };
    if (Number(req.headers['content-length']) > maxBytes) {
      refuse(Object.assign(tooLarge(), { closeConnection: true }));
      return;
    }
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      if (settled) return;
      size += chunk.length;
      if (size > maxBytes) {
        chunks.length = 0;
        refuse(Object.assign(tooLarge(), { closeConnection: true }));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(Buffer.concat(chunks));
    });
    // the client went away, or took too long (the server answers that):
    // no failure of the gateway's
    req.on('error', (err) => refuse(Object.assign(err, { clientGone: true })));
  });
}

function lingeringClose(req) {
  const socket = req.socket;
  req.resume();
  socket.end();
  socket.once('end', () => socket.destroy());
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

module.exports = { readBody, lingeringClose };
