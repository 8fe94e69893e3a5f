'use strict';
// The page: three fixed files of public/, and nothing else from the disk.
const fs = require('node:fs/promises');
const path = require('node:path');
const { send } = require('./respond');

const PUBLIC = path.join(__dirname, '..', 'public');

const FILES = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/index.html': ['index.html', 'text/html; charset=utf-8'],
  '/app.js': ['app.js', 'text/javascript; charset=utf-8'],
  '/style.css': ['style.css', 'text/css; charset=utf-8'],
};

// Answers the request if it names one of the files; returns whether it did.
async function serveStatic(pathname, res) {
  const file = FILES[pathname];
  if (!file) return false;
  const [name, contentType] = file;
  send(res, 200, contentType, await fs.readFile(path.join(PUBLIC, name)));
  return true;
}

module.exports = { serveStatic };
