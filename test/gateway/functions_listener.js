'use strict';
// A consumer that works on a queue as the Azure Functions queue trigger
// does, with @azure/storage-queue: it gets messages in batches of
// batchSize (16 by default) and gets the next batch once the messages still
// being handled are newBatchThreshold (half the batch) or fewer; while a
// message is handled it renews its lease every half lease; a handled
// message is deleted; one whose handler threw is let go (visible again
// after retryDelay seconds, 0 by default) until its dequeue count reaches
// maxDequeueCount (5), when it is put on the poison queue (the queue's name
// with "-poison") and deleted.  Bodies are base64 text, as the Functions
// runtime writes and reads them.
//
// It records what the tests check: each get (how many were being handled
// before it, how many it got), each handling (the body, its dequeue
// count, whether it threw), each renewal (the body) and each move to the poison queue.

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

class FunctionsListener {
  // service: a QueueServiceClient; handler(body, message) is awaited, and
  // throws to fail the message.
  constructor(service, queue, handler, options = {}) {
    this.queue = service.getQueueClient(queue);
    this.poison = service.getQueueClient(`${queue}-poison`);
    this.handler = handler;
    this.batchSize = options.batchSize ?? 16;
    this.newBatchThreshold = options.newBatchThreshold ?? Math.floor(this.batchSize / 2);
    this.leaseSeconds = options.leaseSeconds ?? 600;
    this.maxDequeueCount = options.maxDequeueCount ?? 5;
    this.retryDelay = options.retryDelay ?? 0;
    this.pollMs = options.pollMs ?? 100;
    this.inFlight = 0;
    this.gets = [];
    this.handled = [];
    this.renewals = [];
    this.poisoned = [];
    this.errors = [];
    this.stopped = false;
    this.running = new Set();
  }

  // Gets and handles until stop(); resolves once every handling ended.
  async run() {
    while (!this.stopped) {
      if (this.inFlight > this.newBatchThreshold) {
        await sleep(10);
        continue;
      }
      const before = this.inFlight;
      const { receivedMessageItems: got } = await this.queue.receiveMessages({
        numberOfMessages: this.batchSize, visibilityTimeout: this.leaseSeconds,
      });
      this.gets.push({ inFlightBefore: before, got: got.length });
      for (const message of got) {
        this.inFlight++;
        const handling = this.handle(message).catch((err) => this.errors.push(err))
          .finally(() => { this.inFlight--; this.running.delete(handling); });
        this.running.add(handling);
      }
      if (got.length === 0) await sleep(this.pollMs);
    }
    await Promise.all([...this.running]);
  }

  stop() {
    this.stopped = true;
  }

  async handle(message) {
    const current = { messageId: message.messageId, popReceipt: message.popReceipt };
    const body = Buffer.from(message.messageText, 'base64').toString('utf8');
    // the lease renewed every half lease while the handler runs
    let renewing = Promise.resolve();
    const timer = setInterval(() => {
      renewing = renewing.then(async () => {
        const renewed = await this.queue.updateMessage(current.messageId, current.popReceipt, undefined, this.leaseSeconds);
        current.popReceipt = renewed.popReceipt;
        this.renewals.push(body);
      });
    }, (this.leaseSeconds * 1000) / 2);
    let failed = false;
    try {
      await this.handler(body, message);
    } catch {
      failed = true;
    }
    clearInterval(timer);
    await renewing;
    this.handled.push({ body, dequeueCount: message.dequeueCount, failed });
    if (!failed) {
      await this.queue.deleteMessage(current.messageId, current.popReceipt);
    } else if (message.dequeueCount >= this.maxDequeueCount) {
      await this.poison.createIfNotExists();
      await this.poison.sendMessage(message.messageText);
      await this.queue.deleteMessage(current.messageId, current.popReceipt);
      this.poisoned.push(body);
    } else {
      await this.queue.updateMessage(current.messageId, current.popReceipt, undefined, this.retryDelay);
    }
  }
}

module.exports = { FunctionsListener };
