'use strict';
// TAP lines: "ok N - label", "not ok N - label" with the reason as
// comments, and the plan at the end. Numbers go on from TAP_START (the
// steps test/dashboard/run.sh counted before).

class Tap {
  constructor(start) {
    this.number = start - 1;
    this.failed = 0;
  }

  line(passed, label, reason) {
    this.number += 1;
    if (!passed) this.failed += 1;
    console.log(`${passed ? 'ok' : 'not ok'} ${this.number} - ${label}`);
    if (!passed && reason) this.comment(reason);
  }

  comment(text) {
    for (const line of String(text).split('\n')) console.log(`# ${line}`);
  }

  // Runs a check: it passes when fn resolves, fails with the reason it
  // throws. Returns whether it passed.
  async check(label, fn) {
    try {
      await fn();
      this.line(true, label);
      return true;
    } catch (err) {
      this.line(false, label, err && err.stack ? err.stack.split('\n').slice(0, 4).join('\n') : String(err));
      return false;
    }
  }

  plan() {
    console.log(`1..${this.number}`);
  }
}

module.exports = { Tap };
